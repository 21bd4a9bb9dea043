// SqlStore's work on the history as a whole: retention's deletes (server/history/retention.h), giving the
// space back, re-accounting shared between servers, and the plans of the hot queries.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "storage/sql_store.h"
#include "storage/sql_store_internal.h"
#include "storage/store_rows.h"
#include "storage/timestamp.h"

namespace memfleet::storage {
namespace {

// A capture is pinned by a sweep that asked its device (sweep_devices names the device, and not as offline:
// an id no sweep of this server recorded, or one that never asked the device, pins nothing) and by a
// sweep's labels; the agent's own labels pin nothing (docs/reliability.md, "What retention keeps").
constexpr char kRetentionRowsSql[] =
    "SELECT c.capture_id, c.captured_at, r.total_kb, CASE WHEN (c.sweep_id != '' AND EXISTS (SELECT 1 FROM "
    "sweep_devices AS s WHERE s.sweep_id = c.sweep_id AND s.device_id = c.device_id AND s.state != 'offline')) OR "
    "EXISTS (SELECT 1 FROM capture_labels AS l WHERE l.capture_id = c.capture_id AND l.source = 'sweep') THEN 1 "
    "ELSE 0 END, c.raw_base, CASE WHEN c.raw_codec LIKE 'dropped:%' THEN 1 ELSE 0 END FROM captures AS c LEFT JOIN "
    "device_reports AS r ON r.capture_id = c.capture_id "
    "WHERE c.device_id = ?1 ORDER BY c.captured_at, c.capture_id";
// The raw text only (CaptureStore's DroppedRawCodec): never one already dropped, never a keyframe a delta
// with its raw text names. The empty blob keeps the column NOT NULL on both backends without a schema change.
// SQLite also moves the row to the table's end (a new rowid; capture_id, which everything references, stays):
// a row that shrinks in place leaves its page as allocated as before — a raw capture's row filled most of
// one — and only taking the row out of the page lets SQLite merge the emptied pages (3.5 kB a capture
// otherwise). PostgreSQL writes a new row version anyway, and its VACUUM frees the old one and its TOAST.
std::string DropRawSql(SqlDialect d) {
  return absl::StrCat(
      "UPDATE captures SET raw_codec = ?2, raw_blob = ?3",
      d == SqlDialect::kSqlite ? ", rowid = (SELECT MAX(rowid) FROM captures) + 1" : "",
      " WHERE capture_id = ?1 AND raw_codec NOT LIKE 'dropped:%' AND NOT EXISTS (SELECT 1 FROM captures AS d "
      "WHERE d.raw_base = ?1 AND d.raw_codec NOT LIKE 'dropped:%')");
}
// Cascades to the capture's report, its frame and its labels.
constexpr char kDeleteCaptureSql[] = "DELETE FROM captures WHERE capture_id = ?1";

}  // namespace

// ---- retention ----

absl::StatusOr<std::vector<RetentionRow>> SqlStore::RetentionRows(const std::string& device_id) {
  SqlConnectionPool::Lease db = readers_->Acquire();
  return QueryAll(*db, kRetentionRowsSql, {SqlValue::Text(device_id)}, [](const SqlRow& row) {
    RetentionRow r;
    r.capture_id = row.ColumnText(0);
    r.captured_at = row.ColumnText(1);
    r.total_kb = row.ColumnOptionalInt64(2);
    r.pinned = row.ColumnInt64(3) != 0;
    r.keyframe_id = row.ColumnText(4);  // NULL reads as ""
    r.raw_dropped = row.ColumnInt64(5) != 0;
    return r;
  });
}

absl::Status SqlStore::RecordRetention(const std::string& device_id, const RetentionMarks& marks) {
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(device_id, "device_id"));
  MEMFLEET_ASSIGN_OR_RETURN(std::string hourly, NormalizeOptionalTimestamp(marks.hourly_before, "hourly_before"));
  MEMFLEET_ASSIGN_OR_RETURN(std::string daily, NormalizeOptionalTimestamp(marks.daily_before, "daily_before"));
  SqlConnectionPool::Lease db = writers_->Acquire();
  return RunSql(*db, sql_->record_retention, {SqlValue::Text(device_id), SqlValue::Text(hourly), SqlValue::Text(daily)})
      .status();
}

absl::StatusOr<size_t> SqlStore::DeleteCaptures(const std::vector<std::string>& capture_ids) {
  SqlConnectionPool::Lease db = writers_->Acquire();
  MEMFLEET_ASSIGN_OR_RETURN(SqlTransaction txn, SqlTransaction::Begin(*db));
  MEMFLEET_RETURN_IF_ERROR(db->Exec(sql_->defer_foreign_keys));
  std::vector<int64_t> deleted(capture_ids.size(), 0);
  for (size_t i = 0; i < capture_ids.size(); ++i) {
    MEMFLEET_RETURN_IF_ERROR(db->Send(kDeleteCaptureSql, {SqlValue::Text(capture_ids[i])}, SqlRowFn(), &deleted[i]));
  }
  absl::Status committed = txn.Commit();
  if (committed.code() == absl::StatusCode::kInvalidArgument ||
      committed.code() == absl::StatusCode::kFailedPrecondition) {
    return absl::FailedPreconditionError(absl::StrCat(
        "deleting ", capture_ids.size(), " captures would orphan a delta that stays (", committed.message(), ")"));
  }
  MEMFLEET_RETURN_IF_ERROR(committed);
  size_t total = 0;
  for (int64_t n : deleted) total += static_cast<size_t>(n);
  return total;
}

absl::StatusOr<size_t> SqlStore::DropRawCaptures(const std::vector<std::string>& capture_ids, int raw_days) {
  if (raw_days <= 0) return absl::InvalidArgumentError("a raw window must be at least one day");
  const std::string codec = DroppedRawCodec(raw_days);
  const std::string sql = DropRawSql(dialect_);
  SqlConnectionPool::Lease db = writers_->Acquire();
  MEMFLEET_ASSIGN_OR_RETURN(SqlTransaction txn, SqlTransaction::Begin(*db));
  std::vector<int64_t> dropped(capture_ids.size(), 0);
  for (size_t i = 0; i < capture_ids.size(); ++i) {
    MEMFLEET_RETURN_IF_ERROR(db->Send(sql, {SqlValue::Text(capture_ids[i]), SqlValue::Text(codec), SqlValue::Blob("")},
                                      SqlRowFn(), &dropped[i]));
  }
  MEMFLEET_RETURN_IF_ERROR(txn.Commit());
  size_t total = 0;
  for (int64_t n : dropped) total += static_cast<size_t>(n);
  return total;
}

namespace {

absl::StatusOr<int64_t> QueryInt(SqlConnection& db, const char* sql) {
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<int64_t> v,
                            QueryFirst(db, sql, {}, [](const SqlRow& row) { return row.ColumnInt64(0); }));
  if (!v.has_value()) return absl::InternalError(absl::StrCat("\"", sql, "\" returned no row"));
  return *v;
}

absl::StatusOr<int64_t> SqliteFileBytes(SqlConnection& db) {
  MEMFLEET_ASSIGN_OR_RETURN(int64_t pages, QueryInt(db, "PRAGMA page_count"));
  MEMFLEET_ASSIGN_OR_RETURN(int64_t page_size, QueryInt(db, "PRAGMA page_size"));
  return pages * page_size;
}

// The history's tables, which retention's deletes leave free space in.
constexpr char kVacuumHistorySql[] = "VACUUM captures, device_reports, report_blobs, capture_labels";

}  // namespace

absl::StatusOr<SqlStore::FreedSpace> SqlStore::ReturnFreePages(bool allow_vacuum) {
  SqlConnectionPool::Lease db = writers_->Acquire();
  FreedSpace freed;
  if (dialect_ == SqlDialect::kPostgres) {
    MEMFLEET_ASSIGN_OR_RETURN(int64_t before, QueryInt(*db, "SELECT pg_database_size(current_database())"));
    // Not FULL: that rewrites the tables under a lock every server's ingest would wait on.
    MEMFLEET_RETURN_IF_ERROR(db->Exec(kVacuumHistorySql));
    MEMFLEET_ASSIGN_OR_RETURN(int64_t after, QueryInt(*db, "SELECT pg_database_size(current_database())"));
    // Other servers' ingest may grow the database meanwhile: that is not space this call took.
    freed.returned_bytes = std::max<int64_t>(before - after, 0);
    freed.kept_for_new_rows = true;
    return freed;
  }
  MEMFLEET_ASSIGN_OR_RETURN(int64_t before, SqliteFileBytes(*db));
  MEMFLEET_ASSIGN_OR_RETURN(int64_t mode, QueryInt(*db, "PRAGMA auto_vacuum"));
  if (mode == 2) {  // INCREMENTAL
    MEMFLEET_RETURN_IF_ERROR(db->Exec("PRAGMA incremental_vacuum"));
  } else if (allow_vacuum) {
    MEMFLEET_RETURN_IF_ERROR(db->Exec("PRAGMA auto_vacuum = INCREMENTAL"));
    MEMFLEET_RETURN_IF_ERROR(db->Exec("VACUUM"));
  }
  MEMFLEET_ASSIGN_OR_RETURN(int64_t after, SqliteFileBytes(*db));
  freed.returned_bytes = std::max<int64_t>(before - after, 0);
  return freed;
}

// ---- re-accounting shared between servers (PostgreSQL) ----

namespace {

// Serializes joining and starting runs across servers ("mfra"); distinct from the migration lock.
constexpr char kReaccountRunLockSql[] = "SELECT pg_advisory_xact_lock(1835426401)";
constexpr char kOpenReaccountRunSql[] =
    "SELECT run_id FROM reaccount_runs WHERE device_id = ?1 AND finished_at = '' ORDER BY run_id LIMIT 1";
constexpr char kStartReaccountRunSql[] =
    "INSERT INTO reaccount_runs (device_id, started_at) VALUES (?1, ?2) RETURNING run_id";
constexpr char kListReaccountClaimsSql[] =
    "INSERT INTO reaccount_claims (run_id, capture_id, device_id, captured_at) "
    "SELECT ?1, capture_id, device_id, captured_at FROM captures WHERE ?2 = '' OR device_id = ?2";
// A batch no live connection holds, oldest first per device (so a device's deltas follow their keyframe).
// SKIP LOCKED: two servers claiming at once take different rows instead of waiting for each other.
constexpr char kClaimReaccountBatchSql[] =
    "UPDATE reaccount_claims SET claimed_by = pg_backend_pid() WHERE run_id = ?1 AND capture_id IN ("
    "SELECT capture_id FROM reaccount_claims WHERE run_id = ?1 AND NOT done AND (claimed_by IS NULL OR "
    "claimed_by NOT IN (SELECT pid FROM pg_stat_activity WHERE pid IS NOT NULL)) "
    "ORDER BY device_id, captured_at, capture_id LIMIT ?2 FOR UPDATE SKIP LOCKED) "
    "RETURNING capture_id, device_id, captured_at";
constexpr char kReaccountDoneSql[] = "UPDATE reaccount_claims SET done = TRUE WHERE run_id = ?1 AND capture_id = ?2";
constexpr char kFinishReaccountRunSql[] =
    "UPDATE reaccount_runs SET finished_at = ?2 WHERE run_id = ?1 AND finished_at = '' AND NOT EXISTS "
    "(SELECT 1 FROM reaccount_claims WHERE run_id = ?1 AND NOT done)";
constexpr int64_t kReaccountBatch = 8;

struct ClaimedCapture {
  std::string capture_id;
  std::string device_id;
  std::string captured_at;
};

absl::StatusOr<SqlStore::ReaccountRun> JoinOrStartReaccountRun(SqlConnection& db, const std::string& device_id,
                                                               const std::string& started_at) {
  MEMFLEET_ASSIGN_OR_RETURN(SqlTransaction txn, SqlTransaction::Begin(db));
  MEMFLEET_RETURN_IF_ERROR(RunSql(db, kReaccountRunLockSql, {}).status());
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<int64_t> open,
                            QueryFirst(db, kOpenReaccountRunSql, {SqlValue::Text(device_id)},
                                       [](const SqlRow& row) { return row.ColumnInt64(0); }));
  SqlStore::ReaccountRun run;
  if (open.has_value()) {
    run.run_id = *open;
    run.joined = true;
  } else {
    MEMFLEET_ASSIGN_OR_RETURN(
        std::optional<int64_t> started,
        QueryFirst(db, kStartReaccountRunSql, {SqlValue::Text(device_id), SqlValue::Text(started_at)},
                   [](const SqlRow& row) { return row.ColumnInt64(0); }));
    if (!started.has_value()) return absl::InternalError("starting a re-accounting run returned no id");
    run.run_id = *started;
    MEMFLEET_RETURN_IF_ERROR(
        RunSql(db, kListReaccountClaimsSql, {SqlValue::Int(run.run_id), SqlValue::Text(device_id)}).status());
  }
  MEMFLEET_RETURN_IF_ERROR(txn.Commit());
  return run;
}

absl::StatusOr<std::vector<ClaimedCapture>> ClaimReaccountBatch(SqlConnection& db, int64_t run_id) {
  MEMFLEET_ASSIGN_OR_RETURN(std::vector<ClaimedCapture> batch,
                            QueryAll(db, kClaimReaccountBatchSql,
                                     {SqlValue::Int(run_id), SqlValue::Int(kReaccountBatch)}, [](const SqlRow& row) {
                                       return ClaimedCapture{row.ColumnText(0), row.ColumnText(1), row.ColumnText(2)};
                                     }));
  // RETURNING keeps no order.
  std::sort(batch.begin(), batch.end(), [](const ClaimedCapture& a, const ClaimedCapture& b) {
    return std::tie(a.device_id, a.captured_at, a.capture_id) < std::tie(b.device_id, b.captured_at, b.capture_id);
  });
  return batch;
}

}  // namespace

absl::StatusOr<SqlStore::ReaccountRun> SqlStore::ForEachClaimedRawCapture(
    const std::string& device_id, const std::string& started_at, const std::function<void(const RawCapture&)>& fn) {
  MEMFLEET_ASSIGN_OR_RETURN(std::string at, NormalizeTimestamp(started_at, "started_at"));
  if (dialect_ == SqlDialect::kSqlite) {
    MEMFLEET_RETURN_IF_ERROR(ForEachRawCapture(device_id, fn));
    return ReaccountRun{};
  }
  ReaccountRun run;
  {
    SqlConnectionPool::Lease db = writers_->Acquire();
    MEMFLEET_ASSIGN_OR_RETURN(run, JoinOrStartReaccountRun(*db, device_id, at));
  }
  for (;;) {
    std::vector<ClaimedCapture> batch;
    {
      // The claims' backend pid is the connection's: the same one claims and marks done.
      SqlConnectionPool::Lease db = writers_->Acquire();
      MEMFLEET_ASSIGN_OR_RETURN(batch, ClaimReaccountBatch(*db, run.run_id));
      if (batch.empty()) {
        MEMFLEET_RETURN_IF_ERROR(
            RunSql(*db, kFinishReaccountRunSql, {SqlValue::Int(run.run_id), SqlValue::Text(at)}).status());
        return run;
      }
    }
    for (const ClaimedCapture& claimed : batch) {
      MEMFLEET_ASSIGN_OR_RETURN(std::optional<RawCapture> raw, GetRawCapture(claimed.capture_id));
      if (raw.has_value()) fn(*raw);  // else deleted since it was listed
      SqlConnectionPool::Lease db = writers_->Acquire();
      MEMFLEET_RETURN_IF_ERROR(
          RunSql(*db, kReaccountDoneSql, {SqlValue::Int(run.run_id), SqlValue::Text(claimed.capture_id)}).status());
    }
  }
}

}  // namespace memfleet::storage
