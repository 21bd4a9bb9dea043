// The agent's own resident memory is part of what it reports. Most of it is not its heap but clean,
// file-backed pages of its code: start-up (gRPC's and OpenSSL's initialisation, the TLS and HTTP/2
// set-up) touches code it never runs again, and the kernel maps it in 64 kB blocks around each fault.
// DropCleanCodePages unmaps those pages from the agent, at moments when it is idle (connected, a
// capture acked); they stay in the page cache, so what runs again comes back as a minor fault.
// docs/performance.md ("Agent footprint") has the measured effect.
#ifndef MEMFLEET_AGENT_RESIDENT_PAGES_H_
#define MEMFLEET_AGENT_RESIDENT_PAGES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace memfleet::agent {

struct AddressRange {
  uintptr_t begin = 0;
  uintptr_t end = 0;
};

// From the text of /proc/self/smaps: the mappings that are safe to drop — backed by a file, not
// writable, and holding no anonymous (modified, e.g. relocated) page, so unmapping loses nothing.
std::vector<AddressRange> CleanFileMappings(absl::string_view smaps);

// madvise(MADV_DONTNEED) over CleanFileMappings of this process; the bytes of those ranges (0 when
// /proc/self/smaps is unreadable). Safe at any time: dropped pages fault back in from the page cache.
uint64_t DropCleanCodePages();

}  // namespace memfleet::agent

#endif  // MEMFLEET_AGENT_RESIDENT_PAGES_H_
