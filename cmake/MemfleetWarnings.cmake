# Warnings as errors (MEMFLEET_WERROR, on by default), through one INTERFACE target every memfleet
# target links. Turn it off only to try a compiler the project has not been built with yet.
option(MEMFLEET_WERROR "Treat compiler warnings as errors" ON)
add_library(memfleet_warnings INTERFACE)
target_compile_options(memfleet_warnings INTERFACE
  -Wall -Wextra -Wnon-virtual-dtor -Wmissing-declarations $<$<BOOL:${MEMFLEET_WERROR}>:-Werror>)
# Clang checks the locking annotations (ABSL_GUARDED_BY, ABSL_EXCLUSIVE_LOCKS_REQUIRED, ...) at compile
# time; GCC ignores them. The TSan stage of scripts/test is a clang build, so CI runs this check.
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  target_compile_options(memfleet_warnings INTERFACE -Wthread-safety -Wthread-safety-beta)
endif()
