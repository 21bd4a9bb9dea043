# MEMFLEET_SANITIZE=ON: AddressSanitizer + UBSan for every target, failing on the first report.
if(MEMFLEET_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined -fno-sanitize-recover=all)
endif()

# MEMFLEET_BUILD_FUZZERS=ON: a separate build (clang) where every library is instrumented for libFuzzer.
if(MEMFLEET_BUILD_FUZZERS)
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
