// The order of a stored history as the stores answer it (QueryStore::ProcessHistory, DeviceHistory):
// read newest first, so that a limit keeps the newest points, and handed out oldest first.
//
//   return OldestFirst(ReadAllRows(statement, ReadRow));
//
// Header-only; pure.
#ifndef MEMFLEET_STORAGE_HISTORY_ORDER_H_
#define MEMFLEET_STORAGE_HISTORY_ORDER_H_

#include <algorithm>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/records.h"

namespace memfleet::storage {

// Rows read newest first, in time order (the same rows, reversed); an error as it is.
inline absl::StatusOr<std::vector<HistoryRow>> OldestFirst(absl::StatusOr<std::vector<HistoryRow>> newest_first) {
  if (newest_first.ok()) std::reverse(newest_first->begin(), newest_first->end());
  return newest_first;
}

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_HISTORY_ORDER_H_
