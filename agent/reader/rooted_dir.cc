#include "agent/reader/rooted_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "agent/reader/errno_name.h"
#include "capture/node_path.h"
#include "common/scoped_dir.h"
#include "common/scoped_fd.h"

#if defined(SYS_openat2) && __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#define MEMFLEET_HAVE_OPENAT2 1
#else
#define MEMFLEET_HAVE_OPENAT2 0
#endif

namespace memfleet::agent {
namespace {

#if MEMFLEET_HAVE_OPENAT2
long OpenAt2(int dir_fd, const char* path, int flags, uint64_t resolve) {
  struct open_how how;
  std::memset(&how, 0, sizeof how);
  how.flags = static_cast<uint64_t>(static_cast<unsigned int>(flags | O_CLOEXEC));
  how.resolve = resolve;
  return syscall(SYS_openat2, dir_fd, path, &how, sizeof how);
}
#endif

// Opens a node the caller will read: non-blocking so that a FIFO planted in a tree cannot hang the agent,
// then refused unless it is a regular file (procfs and sysfs nodes are), then made blocking again.
int OpenRegular(const RootedDir& root, std::string_view path, int flags, size_t* size, std::string* errno_name) {
  if (path.empty()) {
    *errno_name = "EINVAL";
    return -1;
  }
  ScopedFd fd(root.Open(path, flags | O_NONBLOCK | O_NOCTTY, errno_name));
  if (!fd.valid()) return -1;
  struct stat st;
  if (fstat(fd.get(), &st) != 0) {
    *errno_name = ErrnoName(errno);
  } else if (S_ISDIR(st.st_mode)) {
    *errno_name = "EISDIR";
  } else if (!S_ISREG(st.st_mode)) {
    *errno_name = "EINVAL";
  } else if (fcntl(fd.get(), F_SETFL, 0) != 0) {
    *errno_name = ErrnoName(errno);
  } else {
    *size = st.st_size > 0 ? static_cast<size_t>(st.st_size) : 0;
    return fd.release();
  }
  return -1;
}

}  // namespace

bool IsSafeRelativePath(std::string_view path, bool allow_empty) {
  return path.empty() ? allow_empty : capture::IsSafeNodePath(path);
}

NodeRead ReadFdToEnd(int fd, size_t size_hint, size_t max_bytes) {
  // One byte more than expected, so that EOF shows up without a second buffer growth.
  size_t first = size_hint > 0 ? size_hint + 1 : size_t{16384};
  std::string buffer(std::min(first, max_bytes + 1), '\0');
  size_t length = 0;
  while (true) {
    if (length == buffer.size()) {
      if (buffer.size() > max_bytes) return NodeRead::Failure("EFBIG");
      buffer.resize(std::min(buffer.size() * 2, max_bytes + 1));
    }
    ssize_t n = read(fd, buffer.data() + length, buffer.size() - length);
    if (n < 0) {
      if (errno == EINTR) continue;
      return NodeRead::Failure(ErrnoName(errno));
    }
    if (n == 0) break;
    length += static_cast<size_t>(n);
  }
  if (length > max_bytes) return NodeRead::Failure("EFBIG");
  buffer.resize(length);
  // procfs and sysfs report size 0, so most nodes were read into 16 KiB for a few bytes (or into a
  // doubled buffer): a capture keeps hundreds of them, which held the agent's RSS at several times the
  // capture. One copy of the bytes is cheap next to the read(2) that made them.
  if (buffer.capacity() - length > length / 8 + 64) buffer.shrink_to_fit();
  NodeRead out;
  out.content = std::move(buffer);
  return out;
}

RootedDir::RootedDir(std::string root, Options options) : root_(std::move(root)) {
  if (root_.empty()) {
    root_errno_ = "ENOENT";
    return;
  }
  char* resolved = realpath(root_.c_str(), nullptr);
  if (resolved == nullptr) {
    root_errno_ = ErrnoName(errno);
    return;
  }
  root_real_ = resolved;
  std::free(resolved);
  root_is_slash_ = root_real_ == "/";
  root_fd_.reset(open(root_real_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root_fd_.valid()) {
    root_errno_ = ErrnoName(errno);
    return;
  }
#if MEMFLEET_HAVE_OPENAT2
  if (options.allow_openat2) {
    // ENOSYS on kernels before 5.6, EPERM under some seccomp policies: then realpath() checks instead.
    ScopedFd probe(static_cast<int>(OpenAt2(root_fd_.get(), ".", O_PATH, RESOLVE_BENEATH)));
    use_openat2_ = probe.valid();
  }
#else
  (void)options;
#endif
}

RootedDir::~RootedDir() = default;

int RootedDir::Open(std::string_view path, int flags, std::string* errno_name) const {
  if (!root_fd_.valid()) {
    *errno_name = root_errno_;
    return -1;
  }
  if (!IsSafeRelativePath(path, /*allow_empty=*/true)) {
    *errno_name = "EINVAL";
    return -1;
  }
  std::string relative = path.empty() ? std::string(".") : std::string(path);
#if MEMFLEET_HAVE_OPENAT2
  if (use_openat2_) {
    // Under "/" nothing can escape, and RESOLVE_BENEATH would refuse absolute symlinks a live system may
    // use; magic links (/proc/<pid>/root, fd/N) are refused everywhere.
    uint64_t resolve = RESOLVE_NO_MAGICLINKS | (root_is_slash_ ? 0 : RESOLVE_BENEATH);
    for (int attempt = 0; attempt < 16; ++attempt) {
      long fd = OpenAt2(root_fd_.get(), relative.c_str(), flags, resolve);
      if (fd >= 0) return static_cast<int>(fd);
      int e = errno;
      // EAGAIN: a concurrent rename raced the ".." checks of RESOLVE_BENEATH; the kernel asks to retry.
      if (e == EINTR || e == EAGAIN) continue;
      *errno_name = e == EXDEV ? "EINVAL" : ErrnoName(e);
      return -1;
    }
    *errno_name = "EAGAIN";
    return -1;
  }
#endif
  return OpenWithRealpath(relative, flags, errno_name);
}

int RootedDir::OpenWithRealpath(const std::string& relative, int flags, std::string* errno_name) const {
  std::string full = root_is_slash_ ? "/" + relative : root_real_ + "/" + relative;
  if (!root_is_slash_) {
    char* resolved = realpath(full.c_str(), nullptr);
    if (resolved == nullptr) {
      *errno_name = ErrnoName(errno);
      return -1;
    }
    std::string real(resolved);
    std::free(resolved);
    bool inside =
        real == root_real_ || (real.size() > root_real_.size() && real.compare(0, root_real_.size(), root_real_) == 0 &&
                               real[root_real_.size()] == '/');
    if (!inside) {
      *errno_name = "EINVAL";
      return -1;
    }
    full = std::move(real);
    // The resolved path has no symlink left; one appearing now (a swap after realpath) is refused.
    flags |= O_NOFOLLOW;
  }
  int fd;
  do {
    fd = open(full.c_str(), flags | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) *errno_name = ErrnoName(errno);
  return fd;
}

NodeRead RootedDir::ReadFile(std::string_view path, size_t max_bytes) const {
  std::string errno_name;
  size_t size = 0;
  int fd = OpenRegular(*this, path, O_RDONLY, &size, &errno_name);
  if (fd < 0) return NodeRead::Failure(std::move(errno_name));
  ScopedFd guard(fd);
  return ReadFdToEnd(fd, size, max_bytes);
}

NodeRead RootedDir::WriteThenReadFile(std::string_view path, std::string_view request) const {
  std::string errno_name;
  size_t size = 0;
  int fd = OpenRegular(*this, path, O_RDWR, &size, &errno_name);
  if (fd < 0) return NodeRead::Failure(std::move(errno_name));
  ScopedFd guard(fd);
  ssize_t n;
  do {
    n = write(fd, request.data(), request.size());
  } while (n < 0 && errno == EINTR);
  if (n < 0) return NodeRead::Failure(ErrnoName(errno));
  // The kernel parses one write() as one request; a short write would be a different request.
  if (static_cast<size_t>(n) != request.size()) return NodeRead::Failure("EIO");
  if (lseek(fd, 0, SEEK_SET) < 0 && errno != ESPIPE) return NodeRead::Failure(ErrnoName(errno));
  return ReadFdToEnd(fd, 0);
}

DirList RootedDir::ListDir(std::string_view path) const {
  DirList out;
  ScopedFd fd(Open(path, O_RDONLY | O_DIRECTORY, &out.errno_name));
  if (!fd.valid()) return out;
  ScopedDir scoped_dir(std::move(fd));
  DIR* dir = scoped_dir.get();
  if (dir == nullptr) {
    out.errno_name = ErrnoName(scoped_dir.error());
    return out;
  }
  while (true) {
    errno = 0;
    struct dirent* e = readdir(dir);
    if (e == nullptr) {
      if (errno != 0) {
        out.errno_name = ErrnoName(errno);
        out.entries.clear();
      }
      break;
    }
    std::string_view name(e->d_name);
    if (name == "." || name == "..") continue;
    DirEntry entry;
    entry.name = std::string(name);
    if (e->d_type == DT_DIR) {
      entry.is_directory = true;
    } else if (e->d_type == DT_LNK || e->d_type == DT_UNKNOWN) {
      // sysfs links devices in (sys/block/zram0 -> ../devices/...); whether the link may be followed is
      // decided when it is opened, this only tells the caller what it is.
      struct stat st;
      entry.is_directory = fstatat(dirfd(dir), e->d_name, &st, 0) == 0 && S_ISDIR(st.st_mode);
    }
    out.entries.push_back(std::move(entry));
  }
  std::sort(out.entries.begin(), out.entries.end(),
            [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
  return out;
}

bool RootedDir::IsDirectory(std::string_view path) const {
  std::string errno_name;
  int fd = Open(path, O_PATH, &errno_name);
  if (fd < 0) return false;
  ScopedFd guard(fd);
  struct stat st;
  return fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
}

bool RootedDir::IsRegularFile(std::string_view path) const {
  std::string errno_name;
  int fd = Open(path, O_PATH, &errno_name);
  if (fd < 0) return false;
  ScopedFd guard(fd);
  struct stat st;
  return fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace memfleet::agent
