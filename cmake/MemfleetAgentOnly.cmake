# MEMFLEET_AGENT_ONLY=ON: only memfleet-agent and what it links (common, proto, the capture model,
# agent), no server, storage, CLI, tests or benchmarks. This is the phone build: scripts/build-agent
# configures it, natively (x86_64) or with cmake/toolchains/aarch64-linux-gnu.cmake (arm64).
#
# MEMFLEET_AGENT_STATIC=ON (the default here) makes it a fully static, stripped executable: no ELF
# interpreter and no shared library, so it runs on an Android kernel without bionic or glibc. Debian
# ships a .a beside every .so the agent needs; the imported targets of the config packages (gRPC, abseil,
# c-ares) name the .so, so they are pointed at the .a beside it, keeping their dependency graphs (and so
# the link order static archives need).
option(MEMFLEET_AGENT_STATIC "memfleet-agent: static, stripped, 16 KiB page aligned (phone binary)" ON)

if(MEMFLEET_AGENT_STATIC)
  set(CMAKE_FIND_LIBRARY_SUFFIXES .a)
  set(Protobuf_USE_STATIC_LIBS ON)
  set(OPENSSL_USE_STATIC_LIBS ON)
  set(ZLIB_USE_STATIC_LIBS ON)
  set(Boost_USE_STATIC_LIBS ON)
  # Unused functions and data go at link time: the agent uses a small part of gRPC and protobuf.
  string(APPEND CMAKE_C_FLAGS " -ffunction-sections -fdata-sections")
  string(APPEND CMAKE_CXX_FLAGS " -ffunction-sections -fdata-sections")
endif()

find_package(Threads REQUIRED)
find_package(ZLIB REQUIRED)
find_package(absl CONFIG REQUIRED)
find_package(nlohmann_json 3.10 CONFIG REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)
find_package(Boost 1.74 REQUIRED COMPONENTS system)

# Points every imported library that names a shared object at the static archive beside it.
function(memfleet_use_static_archives)
  get_property(targets DIRECTORY ${PROJECT_SOURCE_DIR} PROPERTY IMPORTED_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(NOT type MATCHES "^(SHARED|UNKNOWN|STATIC)_LIBRARY$")
      continue()
    endif()
    foreach(prop IMPORTED_LOCATION IMPORTED_LOCATION_NONE IMPORTED_LOCATION_RELEASE IMPORTED_LOCATION_RELWITHDEBINFO
                 IMPORTED_LOCATION_NOCONFIG IMPORTED_LOCATION_DEBUG)
      get_target_property(location ${target} ${prop})
      if(location AND location MATCHES "^(.*)\\.so(\\.[0-9.]+)?$")
        set(archive "${CMAKE_MATCH_1}.a")
        if(NOT EXISTS "${archive}")
          message(FATAL_ERROR "${target}: no static archive ${archive} beside ${location}")
        endif()
        set_target_properties(${target} PROPERTIES ${prop} "${archive}")
      endif()
    endforeach()
  endforeach()
endfunction()
if(MEMFLEET_AGENT_STATIC)
  memfleet_use_static_archives()
endif()

add_subdirectory(common)
add_subdirectory(proto)
add_subdirectory(capture)
add_subdirectory(agent)

if(MEMFLEET_AGENT_STATIC)
  # -z max-page-size=16384: LOAD segments aligned for 16 KiB-page kernels (Android 15+) as well as 4 KiB.
  # gRPC core without the plugins a one-address client never uses (xDS, RLS, grpclb...): see the file.
  target_sources(memfleet-agent PRIVATE ${PROJECT_SOURCE_DIR}/agent/static/grpc_core_configuration.cc)
  target_link_options(memfleet-agent PRIVATE -static -s -Wl,--gc-sections -Wl,-z,max-page-size=16384)
endif()
