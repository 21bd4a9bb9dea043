// CaptureTreeFs: a RootFs over a capture tree (docs/capture-format.md), so that the collector reads a
// recorded capture exactly as it reads a live root. `<path>.err` holds the errno a node failed with; `<path>@<arg>` a
// write-then-read or per-pid node; `cmd/<name>[@<arg>]` a command's output.
//
//   CaptureTreeFs fs("tests/data/captures/qcom-edge/tree");
//   fs.Read("proc/22459/oom_score_adj").errno_name;   // "EACCES", from oom_score_adj.err
//   fs.RunCommand("native_heap", "14969").content;     // the file cmd/native_heap@14969
//
// Paths that are absolute, hold "." / ".." / empty segments, or resolve outside the tree (symlinks
// included) are refused with EINVAL. A FIFO or device node in a tree is refused, never opened for reading.
// Thread-safe (no mutable state).
#ifndef MEMFLEET_AGENT_READER_CAPTURE_TREE_FS_H_
#define MEMFLEET_AGENT_READER_CAPTURE_TREE_FS_H_

#include <string>
#include <string_view>

#include "agent/reader/root_fs.h"
#include "agent/reader/rooted_dir.h"

namespace memfleet::agent {

class CaptureTreeFs : public RootFs {
 public:
  using Options = RootedDir::Options;

  // A tree that does not exist is not an error here: every call then fails with its errno.
  explicit CaptureTreeFs(std::string root, Options options);
  explicit CaptureTreeFs(std::string root) : CaptureTreeFs(std::move(root), Options{}) {}

  NodeRead ReadAtMost(std::string_view path, size_t max_bytes) override;
  // Replays `<path>@<arg>` (or its .err); `request` cannot be replayed and is ignored.
  NodeRead WriteThenRead(std::string_view path, std::string_view request, std::string_view arg) override;
  // Entries sorted by name; `x.err` is shown as `x` with is_error set (unless `x` itself exists).
  DirList List(std::string_view path) override;
  bool IsDirectory(std::string_view path) override;
  NodeRead RunCommand(std::string_view name, std::string_view arg) override;
  std::string RootName() const override { return root_.root(); }

 private:
  // The node's bytes; when it is absent, the errno its `.err` file records.
  NodeRead ReadNode(std::string_view path, size_t max_bytes = kMaxNodeBytes);

  RootedDir root_;
};

}  // namespace memfleet::agent

#endif  // MEMFLEET_AGENT_READER_CAPTURE_TREE_FS_H_
