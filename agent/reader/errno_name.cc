#include "agent/reader/errno_name.h"

#include <cerrno>

#include "absl/strings/str_cat.h"

namespace memfleet::agent {

std::string ErrnoName(int errno_value) {
  switch (errno_value) {
    case EPERM:
      return "EPERM";
    case ENOENT:
      return "ENOENT";
    case ESRCH:
      return "ESRCH";
    case EINTR:
      return "EINTR";
    case EIO:
      return "EIO";
    case ENXIO:
      return "ENXIO";
    case E2BIG:
      return "E2BIG";
    case ENOEXEC:
      return "ENOEXEC";
    case EBADF:
      return "EBADF";
    case ECHILD:
      return "ECHILD";
    case EAGAIN:
      return "EAGAIN";
    case ENOMEM:
      return "ENOMEM";
    case EACCES:
      return "EACCES";
    case EFAULT:
      return "EFAULT";
    case EBUSY:
      return "EBUSY";
    case EEXIST:
      return "EEXIST";
    case EXDEV:
      return "EXDEV";
    case ENODEV:
      return "ENODEV";
    case ENOTDIR:
      return "ENOTDIR";
    case EISDIR:
      return "EISDIR";
    case EINVAL:
      return "EINVAL";
    case ENFILE:
      return "ENFILE";
    case EMFILE:
      return "EMFILE";
    case ENOTTY:
      return "ENOTTY";
    case ETXTBSY:
      return "ETXTBSY";
    case EFBIG:
      return "EFBIG";
    case ENOSPC:
      return "ENOSPC";
    case ESPIPE:
      return "ESPIPE";
    case EROFS:
      return "EROFS";
    case EPIPE:
      return "EPIPE";
    case ERANGE:
      return "ERANGE";
    case EDEADLK:
      return "EDEADLK";
    case ENAMETOOLONG:
      return "ENAMETOOLONG";
    case ENOSYS:
      return "ENOSYS";
    case ELOOP:
      return "ELOOP";
    case ENODATA:
      return "ENODATA";
    case ETIMEDOUT:
      return "ETIMEDOUT";
    case EOVERFLOW:
      return "EOVERFLOW";
    case EOPNOTSUPP:
      return "EOPNOTSUPP";
    case ENOTCONN:
      return "ENOTCONN";
    case ECONNREFUSED:
      return "ECONNREFUSED";
    case ESTALE:
      return "ESTALE";
    case ENOTEMPTY:
      return "ENOTEMPTY";
    case EPROTO:
      return "EPROTO";
    case EBADMSG:
      return "EBADMSG";
    case ENOLINK:
      return "ENOLINK";
    case ECANCELED:
      return "ECANCELED";
    default:
      return absl::StrCat("ERRNO_", errno_value);
  }
}

}  // namespace memfleet::agent
