// The allowlist of nodes the agent may read (docs/capture-format.md): the collector checks every path
// before it reads, writes-then-reads or runs anything, and every folder before it lists it, so that no
// input — a hostile capture tree, a crafted directory entry, a server — can make the agent touch
// anything else.
//
//   IsAllowed("proc/123/smaps");                       // true
//   IsAllowed("proc/self/smaps");                      // false: <pid> is numeric
//   IsAllowed("proc/dma_heap/rss_pid@123");            // true: the write-then-read node for pid 123
//   IsAllowedDirectory("sys/kernel/mm/cma/linux,cma"); // true
//
// Pure functions; thread-safe.
#ifndef MEMFLEET_AGENT_READER_NODE_ALLOWLIST_H_
#define MEMFLEET_AGENT_READER_NODE_ALLOWLIST_H_

#include <string_view>

namespace memfleet::agent {

// A node path as a capture records it: files, `<path>@<pid>` write-then-read nodes and `cmd/...` command
// outputs. <pid>, <fd>, <ino> and zram<N> are decimal without leading zeros; <region> is SafeRegionName.
bool IsAllowed(std::string_view path);

// A folder the collector may list to discover allowlisted nodes ("proc", "proc/<pid>/fdinfo", ...).
bool IsAllowedDirectory(std::string_view path);

// 1-20 decimal digits, no leading zero except "0" itself (pids, fds, inodes; 20 digits hold any u64).
bool IsNumericName(std::string_view name);

// A CMA region name: 1-64 printable ASCII characters other than space and '/', not "." and without
// "..", so that it is always exactly one harmless path segment ("linux,cma", "secure_display").
bool IsSafeRegionName(std::string_view name);

}  // namespace memfleet::agent

#endif  // MEMFLEET_AGENT_READER_NODE_ALLOWLIST_H_
