# Cross compiling for arm64 (aarch64) Linux with Debian's own cross toolchain (g++-aarch64-linux-gnu) and
# the :arm64 multiarch -dev packages (dpkg --add-architecture arm64). scripts/build-agent arm64 uses it.
#
# Libraries and headers come from the arm64 multiarch folders (/usr/lib/aarch64-linux-gnu); programs run at
# build time (protoc, grpc_cpp_plugin) are the host's, since the :arm64 ones cannot run on the build machine.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# Running the test binaries of a cross build (try_run, ctest) goes through qemu-user.
find_program(MEMFLEET_QEMU_AARCH64 qemu-aarch64-static)
if(MEMFLEET_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${MEMFLEET_QEMU_AARCH64})
endif()
# pkg-config (used by gRPC's Findre2) reads the arm64 .pc files, not the host's.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
