// Which kind of root a folder given to memfleet-agent --root or `memfleet account` is: a capture tree (its
// recorded nodes are only read) or a live root (a running system: its nodes are read, its
// system/bin/dumpsys and am are run, its proc/dma_heap/rss_pid is written). Only "/" is a live root unless
// the user says otherwise (--live-root), so that a data folder laid out like a root — a dangling
// capture.json, a planted system/bin/dumpsys — can never make memfleet run or write what it holds.
//
//   absl::StatusOr<RootKind> kind = ChooseRootKind(root, /*live_root_flag=*/false);
//   if (!kind.ok()) return Fail(kind.status().message());   // names the folder and what to do
//
// Reads the file system (realpath, lstat, one open of capture.json beneath the root); no other effect.
#ifndef MEMFLEET_AGENT_READER_ROOT_KIND_H_
#define MEMFLEET_AGENT_READER_ROOT_KIND_H_

#include <string>

#include "absl/status/statusor.h"

namespace memfleet::agent {

enum class RootKind { kCaptureTree, kLiveRoot };

// kCaptureTree when `root` holds a capture.json that is a regular file beneath it and readable;
// kLiveRoot when it has no capture.json and is "/" (after resolving symlinks), or `live_root_flag` is set.
// FailedPrecondition otherwise — a capture.json that is a dangling or escaping symlink, not a regular
// file or unreadable; a folder that is neither; --live-root on a capture tree — with a message that says
// which, and mentions --live-root where it applies. NotFound when `root` is not a folder.
absl::StatusOr<RootKind> ChooseRootKind(const std::string& root, bool live_root_flag);

}  // namespace memfleet::agent

#endif  // MEMFLEET_AGENT_READER_ROOT_KIND_H_
