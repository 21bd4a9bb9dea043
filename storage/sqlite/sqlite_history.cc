#include "storage/sqlite/sqlite_history.h"

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "storage/sqlite/sqlite_db.h"
#include "storage/store_rows.h"

namespace memfleet::storage {

struct SqliteHistory::Db {
  SqliteDb db;
};

namespace {

constexpr char kCaptureFactsSql[] =
    "SELECT capture_id, device_id, received_at, sweep_id, raw_bytes, build_fingerprint, raw_base IS NOT NULL "
    "FROM captures ORDER BY captured_at, capture_id";
constexpr char kSweepIdsSql[] = "SELECT sweep_id FROM sweeps ORDER BY sweep_id";
constexpr char kRowCountsSql[] =
    "SELECT (SELECT COUNT(*) FROM sweeps), (SELECT COUNT(*) FROM sweep_devices), "
    "(SELECT COUNT(*) FROM capture_labels), (SELECT COUNT(*) FROM device_retention)";

}  // namespace

SqliteHistory::SqliteHistory(std::unique_ptr<Db> db) : db_(std::move(db)) {}
SqliteHistory::~SqliteHistory() = default;

absl::StatusOr<std::unique_ptr<SqliteHistory>> SqliteHistory::Open(const std::string& path) {
  auto db = std::make_unique<Db>();
  MEMFLEET_ASSIGN_OR_RETURN(db->db, SqliteDb::Open(path, SQLITE_OPEN_READONLY));
  // A file that is not memfleet's (or not SQLite at all) fails here, before anything is copied.
  absl::StatusOr<Statement> probe = db->db.Prepare(kCaptureFactsSql);
  if (!probe.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " is not a memfleet SQLite database: ", probe.status().message()));
  }
  return std::unique_ptr<SqliteHistory>(new SqliteHistory(std::move(db)));
}

absl::Status SqliteHistory::ForEachCapture(const std::function<absl::Status(const CaptureFacts&)>& fn) {
  MEMFLEET_ASSIGN_OR_RETURN(Statement stmt, db_->db.Prepare(kCaptureFactsSql));
  for (;;) {
    MEMFLEET_ASSIGN_OR_RETURN(StepResult step, stmt.Step());
    if (step != StepResult::kRow) return absl::OkStatus();
    CaptureFacts facts;
    facts.capture_id = stmt.ColumnText(0);
    facts.device_id = stmt.ColumnText(1);
    facts.received_at = stmt.ColumnText(2);
    facts.sweep_id = stmt.ColumnText(3);
    facts.raw_bytes = NonNegative(stmt.ColumnInt64(4));
    facts.build_fingerprint = stmt.ColumnText(5);
    facts.is_delta = stmt.ColumnInt64(6) != 0;
    MEMFLEET_RETURN_IF_ERROR(fn(facts));
  }
}

absl::StatusOr<std::vector<std::string>> SqliteHistory::SweepIds() {
  MEMFLEET_ASSIGN_OR_RETURN(Statement stmt, db_->db.Prepare(kSweepIdsSql));
  std::vector<std::string> ids;
  for (;;) {
    MEMFLEET_ASSIGN_OR_RETURN(StepResult step, stmt.Step());
    if (step != StepResult::kRow) return ids;
    ids.push_back(stmt.ColumnText(0));
  }
}

absl::StatusOr<HistoryRowCounts> SqliteHistory::RowCounts() {
  MEMFLEET_ASSIGN_OR_RETURN(Statement stmt, db_->db.Prepare(kRowCountsSql));
  MEMFLEET_ASSIGN_OR_RETURN(StepResult step, stmt.Step());
  if (step != StepResult::kRow) return absl::InternalError("the row counts returned no row");
  return HistoryRowCounts{NonNegative(stmt.ColumnInt64(0)), NonNegative(stmt.ColumnInt64(1)),
                          NonNegative(stmt.ColumnInt64(2)), NonNegative(stmt.ColumnInt64(3))};
}

}  // namespace memfleet::storage
