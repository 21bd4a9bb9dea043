// ScopedDir: owns one open directory stream (DIR*) and closes it when it goes out of scope, like
// ScopedFd for descriptors. It is made from an owned descriptor, which fdopendir takes over.
//
//   ScopedDir dir(ScopedFd(openat(parent, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)));
//   if (!dir.valid()) return ErrnoName(dir.error());
//   while (struct dirent* e = readdir(dir.get())) ...
//
// Header only.
#ifndef MEMFLEET_COMMON_SCOPED_DIR_H_
#define MEMFLEET_COMMON_SCOPED_DIR_H_

#include <dirent.h>
#include <errno.h>

#include <utility>

#include "common/scoped_fd.h"

namespace memfleet {

class ScopedDir {
 public:
  // Takes `fd` over. On failure (including an invalid `fd`, whose errno the caller's open left) the
  // descriptor is closed and error() is the errno that explains it.
  explicit ScopedDir(ScopedFd fd) {
    if (!fd.valid()) {
      error_ = errno;
      return;
    }
    dir_ = fdopendir(fd.get());
    if (dir_ == nullptr) {
      error_ = errno;
      return;
    }
    fd.release();
  }
  ~ScopedDir() {
    if (dir_ != nullptr) closedir(dir_);
  }
  ScopedDir(const ScopedDir&) = delete;
  ScopedDir& operator=(const ScopedDir&) = delete;
  ScopedDir(ScopedDir&& other) noexcept : dir_(std::exchange(other.dir_, nullptr)), error_(other.error_) {}
  ScopedDir& operator=(ScopedDir&&) = delete;

  DIR* get() const { return dir_; }
  bool valid() const { return dir_ != nullptr; }
  int error() const { return error_; }

 private:
  DIR* dir_ = nullptr;
  int error_ = 0;
};

}  // namespace memfleet

#endif  // MEMFLEET_COMMON_SCOPED_DIR_H_
