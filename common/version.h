// The one version string of every memfleet binary, stamped by the build (CMake's project version and
// the source's commit): `--version` prints it, the agent sends it in its Hello, the server in its
// Welcome, and `memfleet agents status` and `memfleet devices` show it.
//
//   std::cout << "memfleet-server " << memfleet::Version() << "\n";   // "memfleet-server 0.1.0+g633aed1"
#ifndef MEMFLEET_COMMON_VERSION_H_
#define MEMFLEET_COMMON_VERSION_H_

namespace memfleet {

// "0.1.0+g633aed1" ("+g<commit>", "-dirty" when the tree had changes); "0.1.0" when built outside git.
const char* Version();

}  // namespace memfleet

#endif  // MEMFLEET_COMMON_VERSION_H_
