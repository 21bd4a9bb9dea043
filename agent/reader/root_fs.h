// RootFs: the agent's only window on the file system — reads raw nodes under a root folder, like
// LevelDB's Env. The root is "/" on a phone (DeviceRootFs) or a capture tree (CaptureTreeFs) in tests and
// simulations; a fake can inject EACCES/EIO. Nothing here parses node contents.
//
//   CaptureTreeFs fs("/path/to/tree");
//   NodeRead r = fs.Read("proc/meminfo");          // r.ok() or r.errno_name == "ENOENT"
//   NodeRead h = fs.WriteThenRead("proc/dma_heap/rss_pid", "pid:123\n", "123");
//
// Paths are relative to the root, '/'-separated, without "." or ".." segments (callers build them from
// the allowlist). Implementations are not thread-safe unless stated.
#ifndef MEMFLEET_AGENT_READER_ROOT_FS_H_
#define MEMFLEET_AGENT_READER_ROOT_FS_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memfleet::agent {

// The largest node the agent holds in memory; a bigger one fails with EFBIG instead of exhausting RAM
// (the biggest real nodes, smaps of large apps, are a few MiB).
inline constexpr size_t kMaxNodeBytes = size_t{256} << 20;

struct NodeRead {
  std::string content;     // the bytes, read to EOF (procfs reports size 0)
  std::string errno_name;  // "" on success; "ENOENT", "EACCES", "EIO", "ESRCH", ...
  bool ok() const { return errno_name.empty(); }
  static NodeRead Failure(std::string errno_name) {
    NodeRead read;
    read.errno_name = std::move(errno_name);
    return read;
  }
};

struct DirEntry {
  std::string name;
  bool is_directory = false;
  // The entry exists but is recorded as failed (a capture tree's "<name>.err"): reading or listing it
  // gives that errno. Never set by a live root.
  bool is_error = false;
};

struct DirList {
  std::vector<DirEntry> entries;  // sorted by name; no "." / ".."
  std::string errno_name;         // "" on success
  bool ok() const { return errno_name.empty(); }
};

class RootFs {
 public:
  virtual ~RootFs() = default;
  // The node read to EOF, or the error "EFBIG" (no content) when it holds more than `max_bytes`: no more
  // than max_bytes + 1 bytes of it are read, so the caller's budget bounds what a read holds in memory.
  virtual NodeRead ReadAtMost(std::string_view path, size_t max_bytes) = 0;
  NodeRead Read(std::string_view path) { return ReadAtMost(path, kMaxNodeBytes); }
  // One write() of `request`, then a read to EOF, serialized (MTK rss_pid is one-shot and global).
  // `arg` names the argument the capture records the node under ("<path>@<arg>").
  virtual NodeRead WriteThenRead(std::string_view path, std::string_view request, std::string_view arg) = 0;
  virtual DirList List(std::string_view path) = 0;
  virtual bool IsDirectory(std::string_view path) = 0;
  // Output of an allowlisted command ("dumpsys_meminfo", "dumpsys_gpu_gpumem", "native_heap" with arg
  // pid); ENOENT when the command does not exist on this root.
  virtual NodeRead RunCommand(std::string_view name, std::string_view arg) = 0;
  // The root as a user would name it in a message (its folder); empty when there is none.
  virtual std::string RootName() const { return {}; }
};

}  // namespace memfleet::agent

#endif  // MEMFLEET_AGENT_READER_ROOT_FS_H_
