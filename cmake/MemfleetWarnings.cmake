# Warnings as errors, through one INTERFACE target every memfleet target links.
add_library(memfleet_warnings INTERFACE)
target_compile_options(memfleet_warnings INTERFACE
  -Wall -Wextra -Werror -Wnon-virtual-dtor -Wmissing-declarations)
