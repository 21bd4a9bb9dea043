// ScopedFd: owns one file descriptor and closes it when it goes out of scope, so that no early return
// leaks one. Movable, not copyable; -1 means "none".
//
//   ScopedFd fd(open(path, O_RDONLY | O_CLOEXEC));
//   if (!fd.valid()) return ErrnoName(errno);
//   read(fd.get(), ...);
//
// Header only; no state beyond the descriptor.
#ifndef MEMFLEET_COMMON_SCOPED_FD_H_
#define MEMFLEET_COMMON_SCOPED_FD_H_

#include <unistd.h>

#include <utility>

namespace memfleet {

class ScopedFd {
 public:
  ScopedFd() = default;
  explicit ScopedFd(int fd) : fd_(fd) {}
  ~ScopedFd() { reset(); }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  ScopedFd(ScopedFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  ScopedFd& operator=(ScopedFd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Closes the descriptor held (if any) and takes `fd`.
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }
  // The descriptor, no longer owned (for fdopendir, which takes it over).
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_ = -1;
};

}  // namespace memfleet

#endif  // MEMFLEET_COMMON_SCOPED_FD_H_
