// RETURN_IF_ERROR / ASSIGN_OR_RETURN for absl::Status, which Debian 12's abseil lacks.
//
//   MEMFLEET_RETURN_IF_ERROR(DoThing());
//   MEMFLEET_ASSIGN_OR_RETURN(Meminfo m, ParseMeminfo(text));
//
// Header only; no state.
#ifndef MEMFLEET_COMMON_STATUS_MACROS_H_
#define MEMFLEET_COMMON_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define MEMFLEET_RETURN_IF_ERROR(expr)                   \
  do {                                                   \
    ::absl::Status memfleet_status_ = (expr);            \
    if (!memfleet_status_.ok()) return memfleet_status_; \
  } while (0)

#define MEMFLEET_STATUS_CONCAT_INNER_(a, b) a##b
#define MEMFLEET_STATUS_CONCAT_(a, b) MEMFLEET_STATUS_CONCAT_INNER_(a, b)

#define MEMFLEET_ASSIGN_OR_RETURN(lhs, expr) \
  MEMFLEET_ASSIGN_OR_RETURN_IMPL_(MEMFLEET_STATUS_CONCAT_(memfleet_statusor_, __LINE__), lhs, expr)

#define MEMFLEET_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                    \
  if (!statusor.ok()) return std::move(statusor).status();   \
  lhs = std::move(statusor).value()

#endif  // MEMFLEET_COMMON_STATUS_MACROS_H_
