// SqliteStore: the embedded Store (store.h) on one SQLite file — WAL journal, synchronous=FULL, foreign
// keys on, prepared statements only. A PutCapture that returned true is on disk (the WAL is fsynced at
// COMMIT), so the server may ack it to the agent.
//
//   absl::StatusOr<std::unique_ptr<Store>> store = OpenSqliteStore("/var/lib/memfleet/memfleet.db");
//   absl::StatusOr<std::unique_ptr<Store>> tmp = OpenSqliteStore(":memory:");   // tests
//
// Threads: every method may be called from any thread. Writes go through one connection under a mutex
// (SQLite has one writer anyway); reads use a second, read-only connection under its own mutex, so a
// query does not wait for an ingest transaction (WAL readers see the last committed state). A
// ":memory:" database is private to its connection, so there reads share the writer's.
// ForEachRawCapture holds no lock while it runs the callback, which may call back into the store.
//
// Times: every stored or compared time goes through NormalizeTimestamp (timestamp.h), so that the
// lexicographic comparisons in the queries are chronological. Malformed times are InvalidArgument.
// SQLite failures map to Status codes as in SqliteStatus (sqlite_db.h): a full disk (or the
// max_page_count quota) is ResourceExhausted, a read-only database FailedPrecondition.
#ifndef MEMFLEET_STORAGE_SQLITE_SQLITE_STORE_H_
#define MEMFLEET_STORAGE_SQLITE_SQLITE_STORE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/store.h"

namespace memfleet::storage {

namespace sqlite_store_internal {
struct Connection;
}  // namespace sqlite_store_internal

struct SqliteStoreOptions {
  // Opens with SQLITE_OPEN_READONLY and does not migrate (the schema must be the latest); every write
  // then fails with FailedPrecondition. For tools that only read a server's database, and for tests.
  bool read_only = false;
  // How long a statement waits for another process's lock before failing with Unavailable.
  int busy_timeout_ms = 5000;
  // PRAGMA max_page_count when > 0: a size quota in pages; writes beyond it fail like a full disk.
  int64_t max_page_count = 0;
};

// One capture as retention sees it (server/history/retention_plan.h): its time, device total, whether anything
// pins it (the answer to a sweep that asked its device, a sweep's label) and the keyframe it needs.
struct RetentionRow {
  std::string capture_id;
  std::string captured_at;
  std::optional<int64_t> total_kb;
  bool pinned = false;
  std::string keyframe_id;  // raw_base; "" for a whole capture
};

// The queries that must stay index-served as the database grows (see ExplainHotQuery).
enum class HotQuery {
  kProcessTrend,         // ProcessHistory
  kDeviceTrend,          // DeviceHistory
  kLatestDeviceFigure,   // LatestPerDevice with a device figure
  kLatestProcessFigure,  // LatestPerDevice with a process figure
  kReportAt,             // GetReport at a time
  kCaptureProcessRows,   // DeleteCaptures and ReplaceReport: deleting a capture's process rows
};

class SqliteStore : public Store {
 public:
  static absl::StatusOr<std::unique_ptr<SqliteStore>> Open(const std::string& path,
                                                           const SqliteStoreOptions& options);
  ~SqliteStore() override;

  absl::Status UpsertDevice(const DeviceRecord& device) override;
  absl::StatusOr<bool> RetireDevice(const std::string& device_id, const std::string& retired_at) override;
  absl::StatusOr<uint64_t> PurgeDevice(const std::string& device_id) override;
  absl::StatusOr<bool> PutCapture(const CaptureRecord& capture) override;
  absl::StatusOr<std::vector<bool>> PutCaptures(const std::vector<CaptureRecord>& captures) override;
  absl::StatusOr<bool> HasCapture(const std::string& capture_id) override;
  absl::StatusOr<std::optional<std::string>> CaptureDevice(const std::string& capture_id) override;
  absl::StatusOr<std::vector<DeviceSummaryRow>> ListDevices() override;
  absl::StatusOr<std::optional<DeviceRecord>> GetDevice(const std::string& device_id) override;
  absl::StatusOr<std::optional<StoredReport>> GetReport(const std::string& device_id,
                                                        const std::string& at) override;
  absl::StatusOr<std::optional<StoredReport>> GetReportByCapture(const std::string& capture_id) override;
  absl::StatusOr<std::vector<HistoryRow>> ProcessHistory(const std::string& device_id,
                                                         const std::string& process_name,
                                                         const std::string& metric, const std::string& since,
                                                         uint32_t limit) override;
  absl::StatusOr<std::vector<HistoryRow>> DeviceHistory(const std::string& device_id, const std::string& metric,
                                                        const std::string& since, uint32_t limit) override;
  absl::StatusOr<std::vector<FleetValueRow>> LatestPerDevice(const std::string& metric,
                                                             const std::string& process_name) override;
  absl::StatusOr<RetentionMarks> GetRetentionMarks(const std::string& device_id) override;
  absl::Status ForEachRawCapture(const std::string& device_id,
                                 const std::function<void(const RawCapture&)>& fn) override;
  absl::StatusOr<std::optional<RawCapture>> GetRawCapture(const std::string& capture_id) override;
  absl::Status ReplaceReport(const std::string& capture_id, const report::Report& report,
                             const std::string& report_json) override;
  absl::Status PutSweep(const SweepRecord& sweep) override;
  absl::StatusOr<std::optional<SweepRecord>> GetSweep(const std::string& sweep_id) override;
  absl::StatusOr<std::vector<SweepRecord>> UnfinishedSweeps() override;
  absl::StatusOr<Stats> GetStats() override;

  // TokenStore
  absl::Status PutToken(const TokenRecord& token) override;
  absl::StatusOr<std::optional<TokenRecord>> FindTokenByHash(const std::string& sha256_hex) override;
  absl::StatusOr<std::vector<TokenRecord>> ListTokens() override;
  absl::StatusOr<bool> HasTokens() override;
  absl::StatusOr<bool> RevokeToken(const std::string& name, const std::string& revoked_at) override;

  // One server per SQLite file: its in-memory registry is the fleet.
  FleetStore* fleet() override { return nullptr; }

  // BaselineStore and its report queries
  absl::StatusOr<int64_t> PutBaseline(const std::string& name, const std::string& imported_at,
                                      const std::string& raw_text) override;
  absl::StatusOr<std::optional<BaselineRecord>> GetBaseline(int64_t version) override;
  absl::StatusOr<std::vector<StoredReport>> LatestReportsOfSweep(const std::string& sweep_id) override;
  absl::StatusOr<std::vector<StoredReport>> LatestReportsSince(const std::string& since) override;
  absl::StatusOr<std::vector<StoredReport>> LatestReportsPerBuild(const std::string& since) override;

  // Labels
  absl::StatusOr<std::vector<LabelledCapture>> LabelledCaptures(const LabelSet& all_of) override;
  absl::StatusOr<LabelSet> CaptureLabels(const std::string& capture_id) override;
  absl::StatusOr<std::optional<int64_t>> CaptureFigure(const std::string& capture_id, const std::string& metric,
                                                       const std::string& process_name) override;


  // Retention (server/history/retention.h). A device's captures, oldest first.
  absl::StatusOr<std::vector<RetentionRow>> RetentionRows(const std::string& device_id);
  // Deletes the captures — raw blob, report and process rows — in one transaction; returns how many
  // were deleted. FailedPrecondition, deleting none, when a delta that stays needs one of them.
  absl::StatusOr<size_t> DeleteCaptures(const std::vector<std::string>& capture_ids);
  // Records that the device's history is thinned up to these marks ("" leaves a mark as it is); a mark
  // never moves back.
  absl::Status RecordRetention(const std::string& device_id, const RetentionMarks& marks);
  // Gives the database's free pages back to the file system: PRAGMA incremental_vacuum on a file made with
  // auto_vacuum=INCREMENTAL (every file since schema 14), else — when `allow_vacuum` — one VACUUM, which
  // also converts it but holds the write lock while it copies the database. Returns the bytes the file
  // shrank by (0 when it would have needed a VACUUM it was not allowed).
  absl::StatusOr<int64_t> ReturnFreePages(bool allow_vacuum);

  // EXPLAIN QUERY PLAN of a hot query, exactly as the method runs it (metric total_kb), one line per
  // plan row — for tests that assert an index serves it.
  absl::StatusOr<std::vector<std::string>> ExplainHotQuery(HotQuery query);

 private:
  using Connection = sqlite_store_internal::Connection;
  SqliteStore(std::unique_ptr<Connection> writer, std::unique_ptr<Connection> reader);
  Connection& reader();
  // PurgeDevice's last step: the device's own rows, unless a capture of it is stored (false then).
  absl::StatusOr<bool> RemoveDeviceRows(const std::string& device_id);

  // Declared first so it is destroyed last: closing the last connection checkpoints the WAL.
  std::unique_ptr<Connection> writer_;
  std::unique_ptr<Connection> reader_;  // null: reads use writer_
};

absl::StatusOr<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path);
absl::StatusOr<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path,
                                                       const SqliteStoreOptions& options);

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_SQLITE_SQLITE_STORE_H_
