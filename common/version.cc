#include "common/version.h"

#include "common/version_stamp.h"  // generated at build time: cmake/MemfleetVersionStamp.cmake

namespace memfleet {

const char* Version() { return MEMFLEET_VERSION; }

}  // namespace memfleet
