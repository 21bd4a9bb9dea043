// PgStore: the Store (store.h) on a PostgreSQL database, for a lab whose servers share one database. Same
// results as SqliteStore for every method of the five interfaces; SqliteStore's extras (retention's
// deletes, query plans) are not here. A PutCapture that returned true is committed
// (synchronous_commit), so the server may ack it to the agent.
//
//   absl::StatusOr<std::unique_ptr<PgStore>> store = PgStore::Open("postgresql://memfleet@db.lab:5432/memfleet");
//
// The database must exist; Open creates and migrates memfleet's tables in it (pg_schema.h), serialized
// with any other server doing the same. Threads: every method may be called from any thread. Writes go
// through one connection under a mutex, reads through a second one under its own, so a query does not
// wait for an ingest transaction (it sees the last committed state). ForEachRawCapture holds no lock
// while it runs the callback, which may call back into the store. A connection the server drops is
// reconnected at its next statement.
//
// Times are stored as SqliteStore stores them (canonical text, NormalizeTimestamp) in "C"-collated
// columns, so the comparisons and orderings are the same byte for byte.
#ifndef MEMFLEET_STORAGE_POSTGRES_PG_STORE_H_
#define MEMFLEET_STORAGE_POSTGRES_PG_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/history_counts.h"
#include "storage/store.h"

namespace memfleet::storage {

namespace pg_store_internal {
struct Connection;
}  // namespace pg_store_internal

class PgStore : public Store, public FleetStore {
 public:
  // `uri`: a libpq connection URI, postgresql://USER@HOST:PORT/DB.
  static absl::StatusOr<std::unique_ptr<PgStore>> Open(const std::string& uri);
  ~PgStore() override;

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

  // FleetStore (pg_fleet.cc): servers sharing the database see each other's agents and relay sweeps.
  FleetStore* fleet() override { return this; }
  absl::Status PutSession(const SessionRecord& session) override;
  absl::Status TouchSessions(const std::string& server_id, int64_t heartbeat_ms) override;
  absl::Status DeleteSession(const std::string& device_id, const std::string& server_id) override;
  absl::StatusOr<std::vector<SessionRecord>> LiveSessions(int64_t heartbeat_since_ms) override;
  absl::Status PutSweepRelays(const std::vector<SweepRelay>& relays) override;
  absl::StatusOr<std::vector<SweepRelay>> TakeSweepRelays(const std::string& server_id) override;
  absl::Status SetSweepRelayState(const std::string& sweep_id, const std::string& device_id, const std::string& state,
                                  const std::string& capture_id, const std::string& message) override;
  absl::StatusOr<std::vector<SweepRelay>> SweepRelays(const std::string& sweep_id) override;
  absl::Status DeleteSweepRelays(const std::string& sweep_id) override;

  // For a history copied in from another backend (memfleet-server migrate): records a device's retention
  // marks as retention left them there (a mark never moves back), and counts the rows no interface counts.
  absl::Status RecordRetention(const std::string& device_id, const RetentionMarks& marks);
  absl::StatusOr<HistoryRowCounts> CountHistoryRows();

  // Re-accounting shared between servers: the raw captures of a run (`device_id` "" = all), each handed
  // to `fn` by exactly one of the servers walking the same run. The walk joins the unfinished run of the
  // same scope if there is one, else starts one (at `started_at`, RFC 3339) listing the captures stored
  // now; then it claims batches of the run's captures no live server holds (FOR UPDATE SKIP LOCKED),
  // calls `fn` on each with no lock held and marks it done. It returns when nothing is left to claim; the
  // server that finds the run's last capture done marks the run finished. A claim whose server died (its
  // connection gone) is claimed again: that capture may then be handed out twice, never zero times.
  struct ReaccountRun {
    int64_t run_id = 0;
    bool joined = false;  // another server had started it
  };
  absl::StatusOr<ReaccountRun> ForEachClaimedRawCapture(const std::string& device_id, const std::string& started_at,
                                                        const std::function<void(const RawCapture&)>& fn);

 private:
  using Connection = pg_store_internal::Connection;
  PgStore(std::unique_ptr<Connection> writer, std::unique_ptr<Connection> reader);

  std::unique_ptr<Connection> writer_;
  std::unique_ptr<Connection> reader_;
};

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_POSTGRES_PG_STORE_H_
