# MEMFLEET_SANITIZE: which sanitizers every target is built with, failing on the first report.
#   OFF (default) | ON or address (AddressSanitizer + UBSan) | thread (ThreadSanitizer, clang)
# ON is kept as a spelling of address so existing build folders and scripts keep working.
set(MEMFLEET_SANITIZE OFF CACHE STRING "Sanitizers: OFF, ON/address (ASan+UBSan), thread (TSan)")
set_property(CACHE MEMFLEET_SANITIZE PROPERTY STRINGS OFF ON address thread)
string(TOLOWER "${MEMFLEET_SANITIZE}" memfleet_sanitize)
if(memfleet_sanitize STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
  # Debian's libabsl is not built with TSan: without these annotations every absl::Mutex is invisible
  # to it (see the file). An OBJECT library, so each executable gets the definitions directly.
  add_library(memfleet_tsan_absl_sync OBJECT ${PROJECT_SOURCE_DIR}/common/tsan/absl_sync_annotations.cc)
  target_include_directories(memfleet_tsan_absl_sync PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(memfleet_tsan_absl_sync PRIVATE absl::synchronization memfleet_warnings)
  link_libraries(memfleet_tsan_absl_sync)
elseif(memfleet_sanitize MATCHES "^(address|on|yes|true|1|y)$")
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined -fno-sanitize-recover=all)
elseif(NOT memfleet_sanitize MATCHES "^(off|no|false|0|n|)$")
  message(FATAL_ERROR "MEMFLEET_SANITIZE=${MEMFLEET_SANITIZE}: expected OFF, ON, address or thread")
endif()

# MEMFLEET_BUILD_FUZZERS=ON: a separate build (clang) where every library is instrumented for libFuzzer.
if(MEMFLEET_BUILD_FUZZERS)
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
