// CollectCapture: one capture of a root — reads every allowlisted node (node_allowlist.h) through a
// RootFs into a Capture, raw. A plain call; scheduling is elsewhere.
//
//   CaptureTreeFs fs(tree);
//   absl::StatusOr<capture::Capture> c = CollectCapture(fs, CollectOptions{});
//
// A node that cannot be read is recorded as an error node with its errno (ENOENT only where the node's
// absence is a fact the rules use, e.g. a pid's smaps), so "absent" and "denied" stay different facts.
#ifndef MEMFLEET_AGENT_READER_COLLECTOR_H_
#define MEMFLEET_AGENT_READER_COLLECTOR_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/reader/root_fs.h"
#include "capture/capture.h"

namespace memfleet::agent {

inline constexpr uint64_t kDefaultMaxCaptureBytes = uint64_t{256} << 20;
inline constexpr uint64_t kDefaultMaxNodeBytes = uint64_t{64} << 20;
// The error name of a node left unread because the capture reached CollectOptions::max_capture_bytes.
inline constexpr char kCaptureFullErrno[] = "ECAPTURE_FULL";

struct CollectOptions {
  // For a device root (no capture.json there), the header the agent writes. Ignored when the root holds
  // a capture.json (a capture tree), which is taken verbatim.
  std::string device_id = "local";
  std::string captured_at;    // RFC 3339 UTC; the caller's clock
  uint64_t page_size = 4096;  // the caller's getpagesize()
  // Further header fields of a device root (DeviceFacts: model, build, access, ...), in this order.
  std::vector<std::pair<std::string, std::string>> header_facts;
  std::optional<int> android_version;   // the header's "android_version" (the dumpsys view's formulas)
  std::optional<uint64_t> ddr_size_kb;  // the header's "ddr_size_kb": the device's installed DRAM
  // Run `am dumpheap -n` / dumpsys / getprop where the root has them (device roots only).
  bool run_commands = true;
  // With run_commands: run `dumpsys meminfo`, `dumpsys gpu --gpumem` and `getprop` in this capture (the
  // scheduler sets it every --dumpsys-every captures; dumpsys costs the phone seconds of CPU).
  bool run_dumpsys = true;
  // Full smaps for every process of a device root (the heaps need it: docs/accounting.md section 8),
  // and "smaps": "full" in its header; else only GPU processes get it, the rest smaps_rollup + maps.
  bool full_smaps = false;
  // With run_commands: `am dumpheap -n` for at most this many GPU processes (a KGSL folder, or a GPU
  // device in maps) per capture; a dump stops the process for up to seconds.
  size_t max_heap_dumps = 2;
  // Which GPU processes get them when there are more: in pid order from heap_dump_round *
  // max_heap_dumps on (wrapping), so that successive captures take each in turn.
  uint64_t heap_dump_round = 0;
  // The most the capture may hold (capture::Capture::held_bytes: contents, paths, error names); the
  // server's default --max-capture-mb, so that what the agent takes the server accepts. A node read in
  // full would take it over: recorded as the error kCaptureFullErrno instead.
  uint64_t max_capture_bytes = kDefaultMaxCaptureBytes;
  // The most one node may hold, the server's default --max-node-mb: a bigger one is recorded as EFBIG.
  uint64_t max_node_bytes = kDefaultMaxNodeBytes;
};

// FailedPrecondition when the root has no proc/meminfo and no capture.json (not a device root nor a
// capture tree): the message names the root's problem for the user.
absl::StatusOr<capture::Capture> CollectCapture(RootFs& fs, const CollectOptions& options);

}  // namespace memfleet::agent

#endif  // MEMFLEET_AGENT_READER_COLLECTOR_H_
