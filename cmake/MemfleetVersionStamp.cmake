# Writes OUT (a header defining MEMFLEET_VERSION) from VERSION and the source tree's commit, rewriting it
# only when the text changes, so a build recompiles common/version.cc alone, and only after a new commit.
# Run at every build by common/CMakeLists.txt: cmake -DSOURCE=... -DVERSION=... -DOUT=... -P this file.
set(stamp "${VERSION}")
if(DEFINED STAMP AND NOT STAMP STREQUAL "")
  set(stamp "${VERSION}+${STAMP}")  # given by the builder (a release, a distribution's build)
else()
  execute_process(COMMAND git -C "${SOURCE}" rev-parse --short=12 HEAD
                  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  if(rc EQUAL 0 AND NOT commit STREQUAL "")
    set(stamp "${VERSION}+g${commit}")
    execute_process(COMMAND git -C "${SOURCE}" diff --quiet HEAD -- RESULT_VARIABLE dirty ERROR_QUIET)
    if(NOT dirty EQUAL 0)
      string(APPEND stamp "-dirty")
    endif()
  endif()
endif()
set(text "#define MEMFLEET_VERSION \"${stamp}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
