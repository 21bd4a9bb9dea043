# The folders that tests, benchmarks and memfleet-loadtest read at run time (tests/support/test_paths.h),
# written as a file beside their executables instead of compiled in as absolute -D values: an object
# then does not depend on where the clone is, and the compiler cache hits across clone folders.
function(memfleet_write_test_paths output_dir)
  file(CONFIGURE OUTPUT ${output_dir}/memfleet-test-paths
    CONTENT "data=${PROJECT_SOURCE_DIR}/tests/data\nbin=${CMAKE_BINARY_DIR}/bin\n")
endfunction()
