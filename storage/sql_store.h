// SqlStore: the Store (store.h), written once over SqlConnection (sql_connection.h) for both databases
// memfleet keeps its history in — an SQLite file (sqlite/sqlite_store.h opens one) and a PostgreSQL
// database several servers share (postgres/pg_store.h). The tables have the same shape on both
// (sqlite/schema.cc, postgres/pg_schema.cc: integer capture and name numbers, a capture's process figures
// in one block, reports as zstd frames against the report dictionary or their keyframe's report, time
// indexes that end at captured_at); the SQL is one text, but for the few places the engines differ
// (GREATEST or MAX, FOR UPDATE, SKIP LOCKED, an index hint). Every answer is the same on both.
//
//   absl::StatusOr<std::unique_ptr<SqlStore>> store = OpenSqliteStore("/var/lib/memfleet/memfleet.db");
//   absl::StatusOr<bool> inserted = (*store)->PutCapture(record);   // false: already stored (dedup)
//
// A PutCapture (PutCaptures) that returned is committed and durable (SQLite's synchronous=FULL,
// PostgreSQL's synchronous_commit), so the server may ack it.
//
// Threads: every method from any thread. Writes go through the writer connections — one on SQLite,
// which has one writer anyway; one per ingest worker on PostgreSQL, which orders concurrent transactions
// itself — and reads through the reader ones, so a query never waits for an ingest transaction (it sees
// the last committed state). ForEachRawCapture and ForEachClaimedRawCapture hold no connection while
// their callback runs, which may call back into the store.
//
// Times: every stored or compared time goes through NormalizeTimestamp (timestamp.h), one canonical text
// in bytewise-compared columns, so the comparisons and orderings are chronological and the same on both.
#ifndef MEMFLEET_STORAGE_SQL_STORE_H_
#define MEMFLEET_STORAGE_SQL_STORE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "storage/history_counts.h"
#include "storage/sql_connection.h"
#include "storage/sql_connection_pool.h"
#include "storage/store.h"
#include "storage/store_rows.h"

namespace memfleet::storage {

// One capture as retention sees it (server/history/retention_plan.h): its time, device total, whether
// anything pins it (the answer to a sweep that asked its device, a sweep's label) and the keyframe it needs.
struct RetentionRow {
  std::string capture_id;
  std::string captured_at;
  std::optional<int64_t> total_kb;
  bool pinned = false;
  std::string keyframe_id;   // raw_base; "" for a whole capture
  bool raw_dropped = false;  // its raw text is gone already (IsDroppedRawCodec)
};

// The queries that must stay index-served as the database grows (see ExplainHotQuery).
enum class HotQuery {
  kProcessTrend,         // ProcessHistory: the device's reports in time order, each with its process block
  kDeviceTrend,          // DeviceHistory
  kHistorySweeps,        // the sweep marks of either history
  kLatestDeviceFigure,   // LatestPerDevice with a device figure
  kLatestProcessFigure,  // LatestPerDevice with a process figure
  kReportAt,             // GetReport at a time
};

class SqlStore : public Store, public FleetStore {
 public:
  // Over `writers` and `readers` (the same pool for a database only one connection can see, SQLite's
  // ":memory:"), whose tables are at the latest schema. `shared`: several servers use the database, so
  // fleet() offers FleetStore (PostgreSQL).
  SqlStore(std::shared_ptr<SqlConnectionPool> writers, std::shared_ptr<SqlConnectionPool> readers, bool shared);
  ~SqlStore() override;

  SqlDialect dialect() const { return dialect_; }

  // CaptureStore
  absl::Status UpsertDevice(const DeviceRecord& device) override;
  absl::StatusOr<bool> RetireDevice(const std::string& device_id, const std::string& retired_at) override;
  absl::StatusOr<uint64_t> PurgeDevice(const std::string& device_id) override;
  absl::StatusOr<bool> PutCapture(const CaptureRecord& capture) override;
  absl::StatusOr<std::vector<bool>> PutCaptures(const std::vector<CaptureRecord>& captures) override;
  absl::StatusOr<bool> HasCapture(const std::string& capture_id) override;
  absl::StatusOr<std::optional<std::string>> CaptureDevice(const std::string& capture_id) override;
  absl::Status ForEachRawCapture(const std::string& device_id,
                                 const std::function<void(const RawCapture&)>& fn) override;
  absl::StatusOr<std::optional<RawCapture>> GetRawCapture(const std::string& capture_id) override;
  absl::Status ReplaceReport(const std::string& capture_id, const report::Report& report,
                             const std::string& report_json) override;
  absl::StatusOr<Stats> GetStats() override;

  // QueryStore
  absl::StatusOr<std::vector<DeviceSummaryRow>> ListDevices() override;
  absl::StatusOr<std::optional<DeviceRecord>> GetDevice(const std::string& device_id) override;
  absl::StatusOr<std::optional<StoredReport>> GetReport(const std::string& device_id, const std::string& at) override;
  absl::StatusOr<std::optional<StoredReport>> GetReportByCapture(const std::string& capture_id) override;
  absl::StatusOr<std::vector<HistoryRow>> ProcessHistory(const std::string& device_id, const std::string& process_name,
                                                         const std::string& metric, const std::string& since,
                                                         uint32_t limit) override;
  absl::StatusOr<std::vector<HistoryRow>> DeviceHistory(const std::string& device_id, const std::string& metric,
                                                        const std::string& since, uint32_t limit) override;
  absl::StatusOr<std::vector<FleetValueRow>> LatestPerDevice(const std::string& metric,
                                                             const std::string& process_name) override;
  absl::StatusOr<RetentionMarks> GetRetentionMarks(const std::string& device_id) override;
  absl::StatusOr<std::vector<StoredReport>> LatestReportsOfSweep(const std::string& sweep_id) override;
  absl::StatusOr<std::vector<StoredReport>> LatestReportsSince(const std::string& since) override;
  absl::StatusOr<std::vector<StoredReport>> LatestReportsPerBuild(const std::string& since) override;
  absl::StatusOr<std::vector<LabelledCapture>> LabelledCaptures(const LabelSet& all_of) override;
  absl::StatusOr<LabelSet> CaptureLabels(const std::string& capture_id) override;
  absl::StatusOr<std::optional<int64_t>> CaptureFigure(const std::string& capture_id, const std::string& metric,
                                                       const std::string& process_name) override;

  // SweepStore
  absl::Status PutSweep(const SweepRecord& sweep) override;
  absl::StatusOr<std::optional<SweepRecord>> GetSweep(const std::string& sweep_id) override;
  absl::StatusOr<std::vector<SweepRecord>> UnfinishedSweeps() override;

  // TokenStore
  absl::Status PutToken(const TokenRecord& token) override;
  absl::StatusOr<std::optional<TokenRecord>> FindTokenByHash(const std::string& sha256_hex) override;
  absl::StatusOr<std::vector<TokenRecord>> ListTokens() override;
  absl::StatusOr<bool> HasTokens() override;
  absl::StatusOr<bool> RevokeToken(const std::string& name, const std::string& revoked_at) override;

  // BaselineStore
  absl::StatusOr<int64_t> PutBaseline(const std::string& name, const std::string& imported_at,
                                      const std::string& raw_text) override;
  absl::StatusOr<std::optional<BaselineRecord>> GetBaseline(int64_t version) override;

  // FleetStore (servers sharing the database): this store when `shared`, else null.
  FleetStore* fleet() override { return shared_ ? this : nullptr; }
  absl::Status PutSession(const SessionRecord& session) override;
  absl::Status TouchSessions(const std::string& server_id, int64_t heartbeat_ms) override;
  absl::Status DeleteSession(const std::string& device_id, const std::string& server_id) override;
  absl::StatusOr<std::vector<SessionRecord>> LiveSessions(int64_t heartbeat_since_ms) override;
  absl::Status PutServerHeartbeat(const std::string& server_id, int64_t heartbeat_ms) override;
  absl::StatusOr<std::vector<std::string>> LiveServers(int64_t heartbeat_since_ms) override;
  absl::Status PutIncidents(const std::string& server_id, const std::vector<IncidentRecord>& incidents) override;
  absl::StatusOr<std::vector<IncidentRecord>> LiveIncidents(int64_t heartbeat_since_ms) override;
  absl::Status PutSweepRelays(const std::vector<SweepRelay>& relays) override;
  absl::StatusOr<std::vector<SweepRelay>> TakeSweepRelays(const std::string& server_id) override;
  absl::Status SetSweepRelayState(const std::string& sweep_id, const std::string& device_id, const std::string& state,
                                  const std::string& capture_id, const std::string& message) override;
  absl::StatusOr<std::vector<SweepRelay>> SweepRelays(const std::string& sweep_id) override;
  absl::Status DeleteSweepRelays(const std::string& sweep_id) override;

  // Retention (server/history/retention.h). A device's captures, oldest first.
  absl::StatusOr<std::vector<RetentionRow>> RetentionRows(const std::string& device_id);
  // Deletes the captures — raw blob, report and process figures — in one transaction; returns how many
  // were deleted. FailedPrecondition, deleting none, when a delta that stays needs one of them.
  absl::StatusOr<size_t> DeleteCaptures(const std::vector<std::string>& capture_ids);
  // Drops the raw text of the captures (their blob emptied, their codec DroppedRawCodec(raw_days)) in one
  // transaction, keeping everything else of them; returns how many were dropped. Skips a capture whose raw
  // is gone already and a keyframe that a delta with its raw text still names (that delta would become
  // unreadable), so deltas go before their keyframes.
  absl::StatusOr<size_t> DropRawCaptures(const std::vector<std::string>& capture_ids, int raw_days);
  // Records that the device's history is thinned up to these marks ("" leaves a mark as it is); a mark
  // never moves back.
  absl::Status RecordRetention(const std::string& device_id, const RetentionMarks& marks);
  // Gives the space deleted captures held back. SQLite: PRAGMA incremental_vacuum on a file made with
  // auto_vacuum=INCREMENTAL (every file since schema 14), else — when `allow_vacuum` — one VACUUM, which
  // also converts it but holds the write lock while it copies the database; returns the bytes the file
  // shrank by (0 when it would have needed a VACUUM it was not allowed). PostgreSQL: VACUUM of the
  // history's tables, which makes their free space reusable by new rows (the files shrink only when
  // their last pages are free); returns the bytes the database shrank by (0 when other servers' captures
  // grew it more meanwhile).
  struct FreedSpace {
    int64_t returned_bytes = 0;      // what the files shrank by
    bool kept_for_new_rows = false;  // PostgreSQL: the rest stays in its files for the next captures
  };
  absl::StatusOr<FreedSpace> ReturnFreePages(bool allow_vacuum);

  // Rows of the kinds the Store interfaces cannot count, for a history copied between databases.
  absl::StatusOr<HistoryRowCounts> CountHistoryRows();

  // Re-accounting shared between servers: the raw captures of a run (`device_id` "" = all), each handed
  // to `fn` by exactly one of the servers walking the same run. On PostgreSQL the walk joins the
  // unfinished run of the same scope if there is one, else starts one (at `started_at`, RFC 3339) listing
  // the captures stored now; then it claims batches of the run's captures no live server holds (FOR
  // UPDATE SKIP LOCKED), calls `fn` on each with no lock held and marks it done, until nothing is left to
  // claim; the server that finds the run's last capture done marks the run finished. A claim whose server
  // died (its connection gone) is claimed again: that capture may then be handed out twice, never zero
  // times. On SQLite, which one server uses, it is ForEachRawCapture (run 0). FleetStore's (fleet_store.h).
  using ReaccountRun = storage::ReaccountRun;
  absl::StatusOr<ReaccountRun> ForEachClaimedRawCapture(const std::string& device_id, const std::string& started_at,
                                                        const std::function<void(const RawCapture&)>& fn) override;

  // The query plan of a hot query, exactly as the method runs it (metric total_kb), one line per plan
  // row — for tests that assert an index serves it. SQLite: EXPLAIN QUERY PLAN's details; PostgreSQL:
  // EXPLAIN's lines (parameters bound to typical values).
  absl::StatusOr<std::vector<std::string>> ExplainHotQuery(HotQuery query);

  // The SQL texts, built once for the dialect (sql_store_sql.cc).
  struct Sql;

 private:
  struct NewCapture;
  // Process name -> its number in process_names.
  using NameNumbers = std::map<std::string, int64_t>;
  // A record that passed ValidateCapture, with its times in canonical form.
  struct ValidCapture {
    const CaptureRecord* record;
    CaptureTimes times;
  };

  // The number of each process name (process_names), adding the names it has not seen; numbers are
  // committed before any capture names them, in a transaction of their own.
  absl::StatusOr<NameNumbers> ProcessNameNumbers(SqlConnection& db, const std::vector<std::string>& names)
      ABSL_LOCKS_EXCLUDED(names_mu_);
  // The number of one name, nullopt when it was never stored (no process of that name anywhere).
  absl::StatusOr<std::optional<int64_t>> KnownNameNumber(const std::string& name) ABSL_LOCKS_EXCLUDED(names_mu_);
  // PurgeDevice's last step: the device's own rows, unless a capture of it is stored (false then).
  absl::StatusOr<bool> RemoveDeviceRows(const std::string& device_id);
  absl::StatusOr<std::vector<bool>> StoreValidCaptures(const std::vector<ValidCapture>& captures);
  // The captures' one transaction on `db`; whether each was new.
  absl::StatusOr<std::vector<bool>> StoreCaptures(SqlConnection& db, const std::vector<ValidCapture>& captures,
                                                  const NameNumbers& names);

  const SqlDialect dialect_;
  const bool shared_;
  const std::unique_ptr<const Sql> sql_;
  std::shared_ptr<SqlConnectionPool> writers_;
  std::shared_ptr<SqlConnectionPool> readers_;

  absl::Mutex names_mu_;
  // Committed names only: a number is never reused or changed, so a cached one stays right.
  std::map<std::string, int64_t, std::less<>> name_numbers_ ABSL_GUARDED_BY(names_mu_);
};

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_SQL_STORE_H_
