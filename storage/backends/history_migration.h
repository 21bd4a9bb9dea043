// History migration: a lab's whole history moved from its SQLite file into PostgreSQL
// (`memfleet-server migrate`, docs/architecture.md "Storage backends"), then checked.
//
//   MEMFLEET_ASSIGN_OR_RETURN(MigrationSource from, OpenMigrationSource("/var/lib/memfleet/memfleet.db", "/tmp"));
//   MEMFLEET_ASSIGN_OR_RETURN(CopiedHistory copied, CopyHistory(from, *pg, /*resume=*/false));
//   MEMFLEET_ASSIGN_OR_RETURN(HistoryCheck check, VerifyHistory(from, *pg, /*report_sample=*/200));
//
// Everything goes through the Store interfaces (records.h) — devices with their dropped-capture totals,
// tokens (hashes only), baselines with their version numbers, captures with their raw blobs (keyframes
// before the deltas that need them), reports, process rows and labels, sweeps, retention marks — so each
// side's rows are written by its own store as it writes any capture (a report is stored against the
// target's copy of its keyframe's report). SqliteHistory supplies what no interface hands out. The source
// must not change while it is copied (stop its server first).
#ifndef MEMFLEET_STORAGE_BACKENDS_HISTORY_MIGRATION_H_
#define MEMFLEET_STORAGE_BACKENDS_HISTORY_MIGRATION_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/sql_store.h"
#include "storage/sqlite/sqlite_history.h"
#include "storage/store.h"

namespace memfleet::storage {

// The SQLite file, opened read-only twice: as a Store and for what the interfaces do not hand out. A file
// of an older schema version is read from an upgraded copy (`upgraded_copy`, a temporary folder removed
// with the source); the file itself is left as it was.
struct MigrationSource {
  MigrationSource();
  MigrationSource(MigrationSource&&) noexcept;
  MigrationSource& operator=(MigrationSource&&) noexcept;
  ~MigrationSource();

  std::unique_ptr<Store> store;
  std::unique_ptr<SqliteHistory> history;
  std::string upgraded_copy;  // "" when the file is at this build's schema version
};

// FailedPrecondition when `sqlite_path` is missing, not memfleet's, or newer than this build. A file of an
// older schema version (any memfleet's) is copied under `work_dir` (SQLite's online backup: what its WAL
// holds too) and the copy upgraded, which needs the file's size free there.
absl::StatusOr<MigrationSource> OpenMigrationSource(const std::string& sqlite_path, const std::string& work_dir);

// What a copy wrote; `*_present` counts what the target held already (a resumed copy).
struct CopiedHistory {
  uint64_t devices = 0, devices_present = 0;
  uint64_t tokens = 0, tokens_present = 0;
  uint64_t baselines = 0, baselines_present = 0;
  uint64_t captures = 0, captures_present = 0;
  uint64_t sweeps = 0;
  uint64_t retention_marks = 0;
};

// Copies the history into `to`. FailedPrecondition, writing nothing, when `to` holds anything and
// `resume` is false; with `resume` what is there already is kept (a copy that stopped part way goes on
// from where it was; VerifyHistory then tells whether what was there matches).
absl::StatusOr<CopiedHistory> CopyHistory(MigrationSource& from, SqlStore& to, bool resume);

// What VerifyHistory compared: one line per check, and one per difference found.
struct HistoryCheck {
  std::vector<std::string> checked;
  std::vector<std::string> mismatches;
  bool ok() const { return mismatches.empty(); }
};

// Compares the two histories: rows per kind (devices, captures, raw bytes, process rows, tokens,
// baselines, sweeps, sweep device states, labels, retention marks); every device, token, baseline, sweep
// and retention mark field by field; and `report_sample` captures spread over the history (the oldest
// and the newest among them) — report as parsed JSON, raw capture and labels. An error only when a store
// cannot be read.
absl::StatusOr<HistoryCheck> VerifyHistory(MigrationSource& from, SqlStore& to, size_t report_sample);

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_BACKENDS_HISTORY_MIGRATION_H_
