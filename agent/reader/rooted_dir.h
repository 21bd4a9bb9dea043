// RootedDir: opens files and folders strictly beneath one root folder — the shared core of CaptureTreeFs
// and DeviceRootFs. A path that is absolute, holds an empty, "." or ".." segment or a NUL, or that resolves
// (through symlinks) outside the root is refused with "EINVAL"; other failures carry the real errno name.
//
//   RootedDir root("/path/to/tree");
//   NodeRead r = root.ReadFile("proc/meminfo");   // read to EOF; a FIFO or socket is refused, never read
//
// Containment is enforced by the kernel (openat2 RESOLVE_BENEATH from a descriptor of the root) where it
// exists, else by realpath() plus a prefix check and O_NOFOLLOW. Thread-safe: the root's descriptor is
// opened once and never changes; the class is neither copyable nor movable.
#ifndef MEMFLEET_AGENT_READER_ROOTED_DIR_H_
#define MEMFLEET_AGENT_READER_ROOTED_DIR_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "agent/reader/root_fs.h"
#include "common/scoped_fd.h"

namespace memfleet::agent {

// True for a path the RootFs contract accepts: a safe node path (capture/node_path.h), or "" when
// `allow_empty` (the root itself, for List and IsDirectory).
bool IsSafeRelativePath(std::string_view path, bool allow_empty);

// Reads `fd` to EOF (procfs and sysfs report size 0, and seq_files need several read() calls).
// `size_hint` (st_size, may be 0) only sizes the first buffer. More than `max_bytes`: EFBIG, after reading
// max_bytes + 1 bytes at most.
NodeRead ReadFdToEnd(int fd, size_t size_hint, size_t max_bytes = kMaxNodeBytes);

class RootedDir {
 public:
  struct Options {
    // Off only in tests, to exercise the realpath() fallback used on kernels older than 5.6.
    bool allow_openat2 = true;
  };

  explicit RootedDir(std::string root, Options options);
  explicit RootedDir(std::string root) : RootedDir(std::move(root), Options{}) {}
  ~RootedDir();
  RootedDir(const RootedDir&) = delete;
  RootedDir& operator=(const RootedDir&) = delete;

  // The root as given, and its resolved absolute form ("" when it could not be resolved).
  const std::string& root() const { return root_; }
  const std::string& root_real() const { return root_real_; }

  // A close-on-exec descriptor for `path` opened with `flags`, or -1 with *errno_name set.
  int Open(std::string_view path, int flags, std::string* errno_name) const;

  // Read to EOF; EFBIG past `max_bytes` (RootFs::ReadAtMost).
  NodeRead ReadFile(std::string_view path, size_t max_bytes = kMaxNodeBytes) const;
  // One write() of `request` at offset 0, then lseek(0) and a read to EOF on the same descriptor.
  // Callers serialize (the MTK node is global and one-shot).
  NodeRead WriteThenReadFile(std::string_view path, std::string_view request) const;
  DirList ListDir(std::string_view path) const;
  bool IsDirectory(std::string_view path) const;
  bool IsRegularFile(std::string_view path) const;

 private:
  int OpenWithRealpath(const std::string& relative, int flags, std::string* errno_name) const;

  std::string root_;
  std::string root_real_;
  std::string root_errno_;  // why the root could not be opened; every call then fails with it
  ScopedFd root_fd_;
  bool use_openat2_ = false;
  bool root_is_slash_ = false;
};

}  // namespace memfleet::agent

#endif  // MEMFLEET_AGENT_READER_ROOTED_DIR_H_
