// What one capture on the agent stream may cost the server, and the shape a node entry must have before it
// is added: paths bounded in bytes and depth (a deep path also creates one folder node per segment), and
// error values that are errno names, not arbitrary bytes.
//
//   MEMFLEET_RETURN_IF_ERROR(CheckEntryShape(entry, limits));
//
// Pure functions; thread-safe.
#ifndef MEMFLEET_PROTO_CAPTURE_LIMITS_H_
#define MEMFLEET_PROTO_CAPTURE_LIMITS_H_

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "common/untrusted_text.h"
#include "memfleet/v1/capture.pb.h"

namespace memfleet::wire {

// Far above any real node path: the deepest allowlisted ones ("sys/class/kgsl/kgsl/proc/<pid>/gpumem_mapped")
// have 7 segments and under 100 bytes.
inline constexpr uint32_t kMaxPathDepth = 32;
inline constexpr uint32_t kMaxPathBytes = 4096;
// Errno names ("ENOENT", "ERRNO_135") are short: common/untrusted_text.h IsErrnoName holds them to this.
inline constexpr uint32_t kMaxErrnoNameBytes = memfleet::kMaxErrnoNameBytes;

struct AssemblyLimits {
  // Bytes the capture holds (capture::Capture::held_bytes: contents, error names and every path,
  // parent folders included).
  uint64_t max_capture_bytes = 256ull << 20;
  // Node paths, parent folders included.
  uint32_t max_nodes = 200000;
  uint64_t max_node_bytes = 64ull << 20;  // one node after its appends
};

// InvalidArgument naming the problem: a path longer than kMaxPathBytes or deeper than kMaxPathDepth
// segments, or an error value that is not an errno name (E, then A-Z 0-9 _, at most kMaxErrnoNameBytes).
// The path's own syntax (relative, no "." / ".." / empty segment) is capture::IsSafeNodePath's (capture/node_path.h).
absl::Status CheckEntryShape(const v1::NodeEntry& entry);

}  // namespace memfleet::wire

#endif  // MEMFLEET_PROTO_CAPTURE_LIMITS_H_
