# Warnings as errors (MEMFLEET_WERROR, on by default), through one INTERFACE target every memfleet
# target links. Turn it off only to try a compiler the project has not been built with yet.
option(MEMFLEET_WERROR "Treat compiler warnings as errors" ON)
add_library(memfleet_warnings INTERFACE)
target_compile_options(memfleet_warnings INTERFACE
  -Wall -Wextra -Wnon-virtual-dtor -Wmissing-declarations $<$<BOOL:${MEMFLEET_WERROR}>:-Werror>)
