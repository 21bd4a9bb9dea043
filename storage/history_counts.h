// HistoryRowCounts: rows of the kinds the Store interfaces cannot count (sweeps, their device states,
// labels, retention marks), as each backend counts them, so that a history copied from one backend to
// another (memfleet-server migrate) can be checked kind by kind.
#ifndef MEMFLEET_STORAGE_HISTORY_COUNTS_H_
#define MEMFLEET_STORAGE_HISTORY_COUNTS_H_

#include <cstdint>

namespace memfleet::storage {

struct HistoryRowCounts {
  uint64_t sweeps = 0;
  uint64_t sweep_devices = 0;
  uint64_t labels = 0;
  uint64_t retention_marks = 0;  // devices whose history retention has thinned
};

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_HISTORY_COUNTS_H_
