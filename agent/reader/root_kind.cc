#include "agent/reader/root_kind.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "agent/reader/rooted_dir.h"
#include "capture/node_path.h"
#include "common/scoped_fd.h"

namespace memfleet::agent {
namespace {

// Why a capture.json symlink that RootedDir would not open is refused (`path` is its full path).
std::string SymlinkProblem(const std::string& root_real, const std::string& path, const std::string& errno_name) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return "is a symlink to nothing (a dangling link)";
    if (errno == ELOOP) return "is a symlink loop";
  }
  if (errno_name != "EINVAL") return absl::StrCat("is a symlink that cannot be followed (", errno_name, ")");
  char* resolved = realpath(path.c_str(), nullptr);
  std::string target = resolved == nullptr ? std::string() : std::string(resolved);
  std::free(resolved);
  bool inside = target.size() > root_real.size() && target.compare(0, root_real.size(), root_real) == 0 &&
                target[root_real.size()] == '/';
  if (inside) {
    return "is an absolute symlink, which memfleet does not follow in a capture tree (make it relative)";
  }
  return "is a symlink that leads out of the folder; memfleet does not follow links out of a capture tree "
         "(copy the file into the tree instead)";
}

// Why the capture.json that exists under `dir` cannot be a capture tree's header; "" when it can. The
// type is checked on an O_PATH descriptor first, so that a FIFO or device node is never opened for reading.
std::string HeaderProblem(const RootedDir& dir, const std::string& path, bool is_symlink) {
  std::string errno_name;
  ScopedFd path_fd(dir.Open(capture::kHeaderNode, O_PATH, &errno_name));
  if (!path_fd.valid()) {
    if (is_symlink) return SymlinkProblem(dir.root_real(), path, errno_name);
    return absl::StrCat("cannot be opened (", errno_name, ")");
  }
  struct stat st {};
  if (fstat(path_fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return "is not a regular file";
  ScopedFd read_fd(dir.Open(capture::kHeaderNode, O_RDONLY | O_NONBLOCK | O_NOCTTY, &errno_name));
  if (!read_fd.valid()) return absl::StrCat("cannot be read (", errno_name, "); fix its permissions");
  return "";
}

}  // namespace

absl::StatusOr<RootKind> ChooseRootKind(const std::string& root, bool live_root_flag) {
  struct stat root_st {};
  if (root.empty() || stat(root.c_str(), &root_st) != 0) {
    return absl::NotFoundError(absl::StrCat(root, ": ", root.empty() ? "no folder given" : std::strerror(errno)));
  }
  if (!S_ISDIR(root_st.st_mode)) return absl::NotFoundError(absl::StrCat(root, ": not a directory"));
  RootedDir dir(root);
  if (dir.root_real().empty()) return absl::NotFoundError(absl::StrCat(root, ": cannot be resolved"));

  std::string header_path = dir.root_real() == "/" ? "/capture.json" : dir.root_real() + "/" + capture::kHeaderNode;
  struct stat header_st {};
  if (lstat(header_path.c_str(), &header_st) == 0) {
    if (live_root_flag) {
      return absl::FailedPreconditionError(
          absl::StrCat(root, " holds a capture.json, so it is a capture tree, not a live root: leave out --live-root"));
    }
    std::string problem = HeaderProblem(dir, header_path, S_ISLNK(header_st.st_mode));
    if (!problem.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat(header_path, " ", problem, "; a capture tree needs a readable capture.json file"));
    }
    return RootKind::kCaptureTree;
  }
  if (errno != ENOENT) {
    return absl::FailedPreconditionError(absl::StrCat(header_path, ": ", std::strerror(errno)));
  }
  if (dir.root_real() == "/" || live_root_flag) return RootKind::kLiveRoot;
  return absl::FailedPreconditionError(
      absl::StrCat(root,
                   " is not a capture tree (no capture.json) and not the live root /. memfleet runs a root's programs "
                   "(system/bin/dumpsys, am) and writes its nodes (proc/dma_heap/rss_pid) only for /; if ",
                   root, " is the root of a running system (a chroot, a mounted device root), pass --live-root"));
}

}  // namespace memfleet::agent
