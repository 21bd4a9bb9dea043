// What a node path may be, and the names of the nodes that are not kernel files (the header and the
// outputs of commands). One rule for every reader of paths: the agent's root file systems, the wire's
// decoder and the engine.
//
//   if (!capture::IsSafeNodePath(entry.path())) return absl::InvalidArgumentError("unsafe node path");
//   capture.Find(capture::NativeHeapNode(pid));
#ifndef MEMFLEET_CAPTURE_NODE_PATH_H_
#define MEMFLEET_CAPTURE_NODE_PATH_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace memfleet::capture {

// The longest node path (Linux's PATH_MAX): longer ones are refused, never shortened.
inline constexpr size_t kMaxNodePathBytes = 4096;

// True for a path that stays inside the capture: relative, '/'-separated, no empty, "." or ".." segment,
// no NUL, at most kMaxNodePathBytes. A path that is not safe is never opened, stored or looked up.
bool IsSafeNodePath(std::string_view path);

// The capture's header (docs/capture-format.md).
inline constexpr char kHeaderNode[] = "capture.json";
// `dumpsys meminfo` as the device printed it, for reconciliation.
inline constexpr char kDumpsysMeminfoNode[] = "cmd/dumpsys_meminfo";
// `getprop` as the device printed it: only an Android device has it.
inline constexpr char kGetpropNode[] = "cmd/getprop";
// `am dumpheap -n` of one process (native allocations with their frames).
std::string NativeHeapNode(int pid);
std::string NativeHeapNode(std::string_view pid);  // the pid as a proc folder names it

}  // namespace memfleet::capture

#endif  // MEMFLEET_CAPTURE_NODE_PATH_H_
