// SqliteHistory: what a whole-history copy out of an SQLite file (memfleet-server migrate) needs besides
// the Store interfaces — each capture's ingest facts that no interface hands out (received_at, sweep,
// uncompressed size, build), every sweep's id, and row counts of the kinds no interface counts. Read-only;
// the copy itself goes through the Store interfaces (storage/backends/history_migration.h).
#ifndef MEMFLEET_STORAGE_SQLITE_SQLITE_HISTORY_H_
#define MEMFLEET_STORAGE_SQLITE_SQLITE_HISTORY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/history_counts.h"

namespace memfleet::storage {

// A stored capture's facts beside its raw blob and report.
struct CaptureFacts {
  std::string capture_id;
  std::string device_id;
  std::string received_at;
  std::string sweep_id;  // "" when periodic
  uint64_t raw_bytes = 0;
  std::string build_fingerprint;  // "" unknown
  bool is_delta = false;          // stored as a delta of a keyframe (raw_base set)
};

class SqliteHistory {
 public:
  // Opens `path` read-only; FailedPrecondition when it is not an SQLite file memfleet wrote.
  static absl::StatusOr<std::unique_ptr<SqliteHistory>> Open(const std::string& path);
  ~SqliteHistory();

  // Every capture, oldest first (captured_at, then capture id); no lock is held during `fn`.
  absl::Status ForEachCapture(const std::function<absl::Status(const CaptureFacts&)>& fn);
  // Every sweep's id, in id order.
  absl::StatusOr<std::vector<std::string>> SweepIds();
  absl::StatusOr<HistoryRowCounts> RowCounts();

 private:
  struct Db;
  explicit SqliteHistory(std::unique_ptr<Db> db);
  std::unique_ptr<Db> db_;
};

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_SQLITE_SQLITE_HISTORY_H_
