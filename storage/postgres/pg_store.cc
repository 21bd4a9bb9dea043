#include "storage/postgres/pg_store.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/status_macros.h"
#include "report/report.h"
#include "storage/history_order.h"
#include "storage/postgres/pg_connection.h"
#include "storage/postgres/pg_schema.h"
#include "storage/postgres/pg_store_internal.h"
#include "storage/report_codec.h"
#include "storage/store_rows.h"
#include "storage/timestamp.h"

namespace memfleet::storage {
namespace {

using pg_store_internal::Connection;

// What `read(const PgRow&)` makes of one row.
template <typename Read>
using RowOf = std::invoke_result_t<const Read&, const PgRow&>;

// Every row of `result`, each read by `read`.
template <typename Read>
std::vector<RowOf<Read>> AllRows(const PgResult& result, const Read& read) {
  std::vector<RowOf<Read>> rows;
  rows.reserve(static_cast<size_t>(result.RowCount()));
  for (int i = 0; i < result.RowCount(); ++i) rows.push_back(read(result.Row(i)));
  return rows;
}

// The first row of `result`, read by `read`; nullopt when it has none.
template <typename Read>
std::optional<RowOf<Read>> FirstRow(const PgResult& result, const Read& read) {
  if (result.RowCount() == 0) return std::nullopt;
  return read(result.Row(0));
}

// `sql` with `params` on `c`, under its mutex, then every row or the first one.
template <typename Read>
absl::StatusOr<std::vector<RowOf<Read>>> QueryAll(Connection& c, std::string_view sql,
                                                  const std::vector<PgParam>& params, const Read& read)
    ABSL_LOCKS_EXCLUDED(c.mu) {
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(PgResult result, c.db.Query(sql, params));
  return AllRows(result, read);
}

template <typename Read>
absl::StatusOr<std::optional<RowOf<Read>>> QueryFirst(Connection& c, std::string_view sql,
                                                      const std::vector<PgParam>& params, const Read& read)
    ABSL_LOCKS_EXCLUDED(c.mu) {
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(PgResult result, c.db.Query(sql, params));
  return FirstRow(result, read);
}

// A statement that returns no rows, on a connection whose mutex the caller holds.
absl::Status Run(PgConnection& db, std::string_view sql, const std::vector<PgParam>& params) {
  return db.Query(sql, params).status();
}

// Run for the statements every stored capture repeats: parsed and planned once per connection, which
// took about a quarter of PostgreSQL's CPU when each was parsed anew (docs/performance.md).
absl::Status RunPrepared(PgConnection& db, std::string_view sql, const std::vector<PgParam>& params) {
  return db.QueryPrepared(sql, params).status();
}

std::string ReadFirstText(const PgRow& row) { return row.ColumnText(0); }
CompressedReport ReadReport(const PgRow& row) { return ReadStoredReport(row); }

// ---- SQL: SqliteStore's statements (sqlite_store.cc says why each is shaped so) in PostgreSQL's dialect:
// $N parameters, GREATEST for SQLite's two-argument MAX, IS NOT DISTINCT FROM for IS, LIMIT NULL for
// "no limit". ----

constexpr char kUpsertDeviceSql[] =
    "INSERT INTO devices (device_id, model, soc, build_fingerprint, kernel, agent_version, page_size, platform, "
    "last_seen_at, dropped_captures, clock_skew_s, manufacturer, build_type, abi, android_sdk, access, selinux) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) "
    "ON CONFLICT (device_id) DO UPDATE SET model = excluded.model, soc = excluded.soc, "
    "build_fingerprint = excluded.build_fingerprint, kernel = excluded.kernel, "
    "agent_version = excluded.agent_version, page_size = excluded.page_size, "
    "platform = CASE WHEN excluded.platform = '' THEN devices.platform ELSE excluded.platform END, "
    "last_seen_at = GREATEST(devices.last_seen_at, excluded.last_seen_at), "
    "dropped_captures = devices.dropped_captures + excluded.dropped_captures, clock_skew_s = excluded.clock_skew_s, "
    "manufacturer = excluded.manufacturer, build_type = excluded.build_type, abi = excluded.abi, "
    "android_sdk = excluded.android_sdk, access = excluded.access, selinux = excluded.selinux, retired_at = ''";

constexpr char kRetireDeviceSql[] =
    "UPDATE devices SET retired_at = CASE WHEN retired_at = '' THEN $2 ELSE retired_at END WHERE device_id = $1";

// PurgeDevice: one batch of the device's deltas, or of what is left once they are gone; each its own
// transaction (labels, reports, process rows and claims go by ON DELETE CASCADE).
std::string PurgeBatchSql(bool deltas) {
  return absl::StrCat("DELETE FROM captures WHERE capture_id IN (SELECT capture_id FROM captures WHERE device_id = $1",
                      deltas ? " AND raw_base IS NOT NULL" : "", " LIMIT ", CaptureStore::kPurgeBatchCaptures, ")");
}
constexpr char kPurgeDeviceRowSql[] =
    "DELETE FROM devices WHERE device_id = $1 AND NOT EXISTS (SELECT 1 FROM captures WHERE device_id = $1)";
constexpr char kPurgeRetentionMarksSql[] = "DELETE FROM device_retention WHERE device_id = $1";
constexpr char kDeviceHasCapturesSql[] = "SELECT 1 FROM captures WHERE device_id = $1 LIMIT 1";

constexpr char kTouchDeviceSql[] =
    "INSERT INTO devices (device_id, last_seen_at) VALUES ($1, $2) "
    "ON CONFLICT (device_id) DO UPDATE SET last_seen_at = GREATEST(devices.last_seen_at, excluded.last_seen_at)";

constexpr char kRefreshPlatformSql[] =
    "UPDATE devices SET platform = COALESCE((SELECT r.platform FROM device_reports AS r WHERE r.device_id = $1 "
    "ORDER BY r.captured_at DESC, r.capture_id DESC LIMIT 1), platform) WHERE device_id = $1";

// A concurrent insert of the same id by another server waits for that one's COMMIT, then does nothing.
constexpr char kInsertCaptureSql[] =
    "INSERT INTO captures (capture_id, device_id, captured_at, received_at, sweep_id, raw_codec, raw_bytes, "
    "raw_blob, build_fingerprint, raw_base) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) "
    "ON CONFLICT (capture_id) DO NOTHING";

constexpr char kInsertDeviceReportSql[] =
    "INSERT INTO device_reports (capture_id, device_id, captured_at, platform, ddr_kb, ddr_estimated, "
    "mem_total_kb, gcma_kb, static_reserved_kb, kernel_cma_kb, kernel_kb, processes_kb, total_kb, report_zstd) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)";

constexpr char kInsertProcessReportSql[] =
    "INSERT INTO process_reports (capture_id, device_id, captured_at, pid, name, oom_score_adj, cached, pss_kb, "
    "swap_pss_kb, gfxdev_kb, gl_kb, dma_kb, native_graphics_kb, native_graphics_source, non_graphics_kb, "
    "graphics_dma_kb, total_kb) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)";

constexpr char kInsertLabelSql[] =
    "INSERT INTO capture_labels (capture_id, key, value, source) VALUES ($1, $2, $3, $4)";
constexpr char kCaptureLabelsSql[] =
    "SELECT key, value, source FROM capture_labels WHERE capture_id = $1 ORDER BY key";

constexpr char kCaptureDeviceSql[] = "SELECT device_id FROM captures WHERE capture_id = $1";
constexpr char kCaptureForReplaceSql[] = "SELECT device_id, captured_at FROM captures WHERE capture_id = $1";
constexpr char kDeleteDeviceReportSql[] = "DELETE FROM device_reports WHERE capture_id = $1";
constexpr char kDeleteProcessReportsSql[] = "DELETE FROM process_reports WHERE capture_id = $1";

constexpr char kReportAtSql[] =
    "SELECT c.capture_id, c.device_id, c.captured_at, r.report_zstd FROM captures AS c "
    "JOIN device_reports AS r ON r.capture_id = c.capture_id "
    "WHERE c.device_id = $1 AND c.captured_at <= $2 ORDER BY c.captured_at DESC, c.capture_id DESC LIMIT 1";
constexpr char kReportLatestSql[] =
    "SELECT c.capture_id, c.device_id, c.captured_at, r.report_zstd FROM captures AS c "
    "JOIN device_reports AS r ON r.capture_id = c.capture_id "
    "WHERE c.device_id = $1 ORDER BY c.captured_at DESC, c.capture_id DESC LIMIT 1";
constexpr char kReportByCaptureSql[] =
    "SELECT c.capture_id, c.device_id, c.captured_at, r.report_zstd FROM captures AS c "
    "JOIN device_reports AS r ON r.capture_id = c.capture_id WHERE c.capture_id = $1";

std::string ListDevicesSql() {
  return absl::StrCat(
      "SELECT ", kDeviceColumnsOfD,
      ", (SELECT COUNT(*) FROM captures AS c WHERE c.device_id = d.device_id)"
      ", (SELECT MAX(c.captured_at) FROM captures AS c WHERE c.device_id = d.device_id)"
      ", (SELECT r.total_kb FROM device_reports AS r WHERE r.device_id = d.device_id"
      " ORDER BY r.captured_at DESC, r.capture_id DESC LIMIT 1)"
      " FROM devices AS d ORDER BY d.device_id");
}

std::string GetDeviceSql() { return absl::StrCat("SELECT ", kDeviceColumnsOfD, " FROM devices AS d WHERE d.device_id = $1"); }

// Newest first, so that a limit keeps the newest points; the caller puts them in time order (OldestFirst).
std::string ProcessTrendSql(const char* column) {
  return absl::StrCat("SELECT capture_id, captured_at, pid, ", column,
                      " FROM process_reports WHERE device_id = $1 AND name = $2 AND captured_at >= $3"
                      " ORDER BY captured_at DESC, pid DESC, capture_id DESC LIMIT $4");
}

std::string DeviceTrendSql(const char* column) {
  return absl::StrCat("SELECT capture_id, captured_at, 0, ", column,
                      " FROM device_reports WHERE device_id = $1 AND captured_at >= $2"
                      " ORDER BY captured_at DESC, capture_id DESC LIMIT $3");
}

constexpr char kLatestReportJoin[] =
    " FROM devices AS d JOIN device_reports AS r ON r.capture_id = ("
    "SELECT latest.capture_id FROM device_reports AS latest WHERE latest.device_id = d.device_id"
    " ORDER BY latest.captured_at DESC, latest.capture_id DESC LIMIT 1)"
    " ORDER BY d.device_id";

std::string LatestDeviceFigureSql(const char* column) {
  return absl::StrCat("SELECT ", kDeviceColumnsOfD, ", r.capture_id, r.captured_at, r.", column, kLatestReportJoin);
}

// Several processes of one name in one capture count together: summed, NULL when one is unknown or none
// has the name (as SQLite's SummedOverPids).
std::string SummedOverPids(const char* column) {
  return absl::StrCat("CASE WHEN COUNT(*) = COUNT(p.", column, ") THEN CAST(SUM(p.", column, ") AS BIGINT) END");
}

std::string LatestProcessFigureSql(const char* column) {
  return absl::StrCat("SELECT ", kDeviceColumnsOfD, ", r.capture_id, r.captured_at, (SELECT ", SummedOverPids(column),
                      " FROM process_reports AS p WHERE p.device_id = r.device_id AND p.name = $1"
                      " AND p.captured_at = r.captured_at AND p.capture_id = r.capture_id)",
                      kLatestReportJoin);
}

constexpr char kRawCaptureIdsAllSql[] = "SELECT capture_id FROM captures ORDER BY captured_at, capture_id";
constexpr char kRawCaptureIdsOfDeviceSql[] =
    "SELECT capture_id FROM captures WHERE device_id = $1 ORDER BY captured_at, capture_id";
constexpr char kRawCaptureSql[] =
    "SELECT capture_id, device_id, captured_at, raw_codec, raw_blob, raw_base FROM captures WHERE capture_id = $1";

constexpr char kUpsertSweepSql[] =
    "INSERT INTO sweeps (sweep_id, started_at, selector, finished_at) VALUES ($1, $2, $3, $4) "
    "ON CONFLICT (sweep_id) DO UPDATE SET started_at = excluded.started_at, selector = excluded.selector, "
    "finished_at = excluded.finished_at";
constexpr char kDeleteSweepDevicesSql[] = "DELETE FROM sweep_devices WHERE sweep_id = $1";
constexpr char kInsertSweepDeviceSql[] = "INSERT INTO sweep_devices (sweep_id, device_id, state) VALUES ($1, $2, $3)";
constexpr char kGetSweepSql[] = "SELECT sweep_id, started_at, selector, finished_at FROM sweeps WHERE sweep_id = $1";
constexpr char kGetSweepDevicesSql[] = "SELECT device_id, state FROM sweep_devices WHERE sweep_id = $1";
constexpr char kUnfinishedSweepIdsSql[] = "SELECT sweep_id FROM sweeps WHERE finished_at = '' ORDER BY sweep_id";

constexpr char kCaptureStatsSql[] =
    "SELECT COUNT(*), COALESCE(SUM(octet_length(raw_blob)), 0), COALESCE(SUM(raw_bytes), 0) FROM captures";
constexpr char kProcessRowCountSql[] = "SELECT COUNT(*) FROM process_reports";

constexpr char kGetRetentionMarksSql[] =
    "SELECT hourly_before, daily_before FROM device_retention WHERE device_id = $1";

constexpr char kPutTokenSql[] =
    "INSERT INTO tokens (name, kind, device_id, sha256, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5, '')";
constexpr char kFindTokenSql[] =
    "SELECT name, kind, device_id, sha256, created_at, revoked_at FROM tokens WHERE sha256 = $1";
constexpr char kListTokensSql[] =
    "SELECT name, kind, device_id, sha256, created_at, revoked_at FROM tokens ORDER BY name";
constexpr char kHasTokensSql[] = "SELECT 1 FROM tokens LIMIT 1";
constexpr char kRevokeTokenSql[] = "UPDATE tokens SET revoked_at = $2 WHERE name = $1 AND revoked_at = ''";

constexpr char kPutBaselineSql[] =
    "INSERT INTO baselines (name, imported_at, raw_text) VALUES ($1, $2, $3) RETURNING version";
constexpr char kGetBaselineSql[] = "SELECT version, name, imported_at, raw_text FROM baselines WHERE version = $1";
constexpr char kGetLatestBaselineSql[] =
    "SELECT version, name, imported_at, raw_text FROM baselines ORDER BY version DESC LIMIT 1";
constexpr char kLatestReportsOfSweepSql[] =
    "SELECT c.capture_id, c.device_id, c.captured_at, r.report_zstd FROM captures c "
    "JOIN device_reports r ON r.capture_id = c.capture_id WHERE c.sweep_id = $1 AND c.capture_id = (SELECT c2.capture_id "
    "FROM captures c2 WHERE c2.sweep_id = $1 AND c2.device_id = c.device_id ORDER BY c2.captured_at DESC, "
    "c2.capture_id DESC LIMIT 1) ORDER BY c.device_id";
constexpr char kLatestReportsSinceSql[] =
    "SELECT c.capture_id, c.device_id, c.captured_at, r.report_zstd FROM devices d "
    "JOIN captures c ON c.capture_id = (SELECT c2.capture_id FROM captures c2 WHERE c2.device_id = d.device_id "
    "ORDER BY c2.captured_at DESC, c2.capture_id DESC LIMIT 1) JOIN device_reports r ON r.capture_id = c.capture_id "
    "WHERE c.captured_at >= $1 ORDER BY d.device_id";
// NULLS FIRST: SQLite sorts an unknown (NULL) build before every known one.
constexpr char kLatestReportsPerBuildSql[] =
    "WITH pairs AS (SELECT DISTINCT device_id, build_fingerprint FROM captures) "
    "SELECT c.capture_id, c.device_id, c.captured_at, r.report_zstd, p.build_fingerprint FROM pairs p "
    "JOIN captures c ON c.capture_id = (SELECT c2.capture_id FROM captures c2 WHERE c2.device_id = p.device_id "
    "AND c2.build_fingerprint IS NOT DISTINCT FROM p.build_fingerprint "
    "ORDER BY c2.captured_at DESC, c2.capture_id DESC LIMIT 1) JOIN device_reports r ON r.capture_id = c.capture_id "
    "WHERE c.captured_at >= $1 ORDER BY p.device_id, p.build_fingerprint NULLS FIRST";

// The captures carrying each of `count` labels from its source, bound as $1/$2/$3 (key/value/source),
// $4/$5/$6, ...
std::string LabelledCapturesSql(size_t count) {
  std::string sql =
      "SELECT c.capture_id, c.device_id, c.captured_at, c.sweep_id, c.build_fingerprint FROM captures AS c WHERE ";
  for (size_t i = 0; i < count; ++i) {
    absl::StrAppend(&sql, i == 0 ? "" : " AND ", "c.capture_id IN (SELECT l.capture_id FROM capture_labels AS l",
                    " WHERE l.key = $", 3 * i + 1, " AND l.value = $", 3 * i + 2, " AND l.source = $", 3 * i + 3, ")");
  }
  return absl::StrCat(sql, " ORDER BY c.device_id, c.captured_at DESC, c.capture_id DESC");
}

std::string CaptureDeviceFigureSql(const char* column) {
  return absl::StrCat("SELECT ", column, " FROM device_reports WHERE capture_id = $1");
}

std::string CaptureProcessFigureSql(const char* column) {
  return absl::StrCat("SELECT ", SummedOverPids(column), " FROM process_reports AS p WHERE p.capture_id = $1",
                      " AND p.name = $2");
}

// LIMIT NULL is PostgreSQL's "no limit".
PgParam Limit(uint32_t limit) { return limit == 0 ? PgParam::OptionalInt(std::nullopt) : PgParam::Int(limit); }

// ---- writes shared by PutCapture and ReplaceReport (caller holds the writer's mutex, in a transaction) ----

absl::Status InsertReportRows(PgConnection& db, const std::string& capture_id, const std::string& device_id,
                              const std::string& captured_at, const report::Report& report,
                              const std::string& report_json) {
  const report::DeviceReport& d = report.device;
  MEMFLEET_RETURN_IF_ERROR(RunPrepared(
      db, kInsertDeviceReportSql,
      {PgParam::Text(capture_id), PgParam::Text(device_id), PgParam::Text(captured_at),
       PgParam::Text(report::PlatformName(report.platform)), PgParam::OptionalInt(d.ddr_kb),
       PgParam::Int(d.ddr_estimated ? 1 : 0), PgParam::OptionalInt(d.mem_total_kb), PgParam::OptionalInt(d.gcma_kb),
       PgParam::OptionalInt(d.static_reserved_kb), PgParam::OptionalInt(d.kernel_cma_kb),
       PgParam::OptionalInt(d.kernel_kb), PgParam::OptionalInt(d.processes_kb), PgParam::OptionalInt(d.total_kb),
       PgParam::Bytes(CompressReportJson(report_json))}));
  for (const auto& [pid, p] : report.processes) {
    // The map key, not p.pid: it is what makes the (capture_id, pid) key unique.
    MEMFLEET_RETURN_IF_ERROR(RunPrepared(
        db, kInsertProcessReportSql,
        {PgParam::Text(capture_id), PgParam::Text(device_id), PgParam::Text(captured_at), PgParam::Int(pid),
         PgParam::Text(p.name), PgParam::OptionalInt(p.oom_score_adj), PgParam::Int(p.cached ? 1 : 0),
         PgParam::OptionalInt(p.pss_kb), PgParam::OptionalInt(p.swap_pss_kb), PgParam::OptionalInt(p.gfxdev_kb),
         PgParam::OptionalInt(p.gl_kb), PgParam::OptionalInt(p.dma_kb), PgParam::OptionalInt(p.native_graphics_kb),
         PgParam::Text(p.native_graphics_source), PgParam::OptionalInt(p.non_graphics_kb),
         PgParam::OptionalInt(p.graphics_dma_kb), PgParam::OptionalInt(p.total_kb)}));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<std::string>> StoredDeviceOf(PgConnection& db, const std::string& capture_id) {
  MEMFLEET_ASSIGN_OR_RETURN(PgResult result, db.Query(kCaptureDeviceSql, {PgParam::Text(capture_id)}));
  return FirstRow(result, ReadFirstText);
}

// Inside the caller's transaction: false (and no write) when capture_id is already stored for the same
// device; AlreadyExists when it is stored for another device (store_rows.h OtherDevicesCapture).
absl::StatusOr<bool> InsertCapture(PgConnection& db, const CaptureRecord& capture, const CaptureTimes& times) {
  MEMFLEET_ASSIGN_OR_RETURN(
      PgResult inserted,
      db.QueryPrepared(kInsertCaptureSql,
               {PgParam::Text(capture.capture_id), PgParam::Text(capture.device_id), PgParam::Text(times.captured_at),
                PgParam::Text(times.received_at), PgParam::Text(capture.sweep_id), PgParam::Text(capture.raw_codec),
                PgParam::Int(static_cast<int64_t>(capture.raw_bytes)), PgParam::Bytes(capture.raw_blob),
                PgParam::TextOrNull(capture.build_fingerprint), PgParam::TextOrNull(capture.raw_base)}));
  if (inserted.AffectedRows() == 0) {
    MEMFLEET_ASSIGN_OR_RETURN(std::optional<std::string> owner, StoredDeviceOf(db, capture.capture_id));
    if (owner.has_value() && *owner != capture.device_id) return OtherDevicesCapture(capture, *owner);
    return false;
  }
  MEMFLEET_RETURN_IF_ERROR(InsertReportRows(db, capture.capture_id, capture.device_id, times.captured_at,
                                            capture.report, capture.report_json));
  for (const StoredLabel& label : StoredLabelsOf(capture.labels)) {
    MEMFLEET_RETURN_IF_ERROR(RunPrepared(db, kInsertLabelSql,
                                         {PgParam::Text(capture.capture_id), PgParam::Text(label.key),
                                          PgParam::Text(label.value), PgParam::Text(label.source)}));
  }
  const std::string& seen_at = times.received_at.empty() ? times.captured_at : times.received_at;
  MEMFLEET_RETURN_IF_ERROR(RunPrepared(db, kTouchDeviceSql, {PgParam::Text(capture.device_id), PgParam::Text(seen_at)}));
  MEMFLEET_RETURN_IF_ERROR(RunPrepared(db, kRefreshPlatformSql, {PgParam::Text(capture.device_id)}));
  return true;
}

HistoryRow ReadHistoryRow(const PgRow& row) {
  HistoryRow h;
  h.capture_id = row.ColumnText(0);
  h.captured_at = row.ColumnText(1);
  h.pid = static_cast<int>(row.ColumnInt64(2));  // stored from an int
  h.value_kb = row.ColumnOptionalInt64(3);
  return h;
}

}  // namespace

// ---- opening ----

PgStore::PgStore(std::unique_ptr<Connection> writer, std::unique_ptr<Connection> reader)
    : writer_(std::move(writer)), reader_(std::move(reader)) {}

PgStore::~PgStore() = default;

absl::StatusOr<std::unique_ptr<PgStore>> PgStore::Open(const std::string& uri) {
  auto writer = std::make_unique<Connection>();
  auto reader = std::make_unique<Connection>();
  {
    // Not shared yet; locked because the analysis cannot know that.
    absl::MutexLock writer_lock(&writer->mu);
    MEMFLEET_ASSIGN_OR_RETURN(writer->db, PgConnection::Connect(uri));
    MEMFLEET_RETURN_IF_ERROR(MigratePgToLatest(writer->db));
  }
  {
    absl::MutexLock reader_lock(&reader->mu);
    MEMFLEET_ASSIGN_OR_RETURN(reader->db, PgConnection::Connect(uri));
  }
  return std::unique_ptr<PgStore>(new PgStore(std::move(writer), std::move(reader)));
}

// ---- writes ----

absl::Status PgStore::UpsertDevice(const DeviceRecord& device) {
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(device.device_id, "device_id"));
  MEMFLEET_ASSIGN_OR_RETURN(std::string last_seen_at, NormalizeOptionalTimestamp(device.last_seen_at, "last_seen_at"));
  Connection& c = *writer_;
  absl::MutexLock lock(&c.mu);
  return Run(c.db, kUpsertDeviceSql,
             {PgParam::Text(device.device_id), PgParam::Text(device.model), PgParam::Text(device.soc),
              PgParam::Text(device.build_fingerprint), PgParam::Text(device.kernel),
              PgParam::Text(device.agent_version), PgParam::Int(device.page_size), PgParam::Text(device.platform),
              PgParam::Text(last_seen_at), PgParam::Int(DroppedCapturesToStore(device.dropped_captures)),
              PgParam::OptionalInt(device.clock_skew_s), PgParam::Text(device.manufacturer),
              PgParam::Text(device.build_type), PgParam::Text(device.abi), PgParam::Text(device.android_sdk),
              PgParam::Text(device.access), PgParam::Text(device.selinux)});
}

absl::StatusOr<bool> PgStore::RetireDevice(const std::string& device_id, const std::string& retired_at) {
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(device_id, "device_id"));
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(retired_at, "retired_at"));
  MEMFLEET_ASSIGN_OR_RETURN(std::string at, NormalizeOptionalTimestamp(retired_at, "retired_at"));
  Connection& c = *writer_;
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(PgResult r, c.db.Query(kRetireDeviceSql, {PgParam::Text(device_id), PgParam::Text(at)}));
  return r.AffectedRows() == 1;
}

absl::StatusOr<uint64_t> PgStore::PurgeDevice(const std::string& device_id) {
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(device_id, "device_id"));
  uint64_t deleted = 0;
  Connection& c = *writer_;
  for (const std::string& batch_sql : {PurgeBatchSql(true), PurgeBatchSql(false)}) {
    while (true) {
      // The writer is this server's ingest's too: held for one batch at a time.
      absl::MutexLock lock(&c.mu);
      MEMFLEET_ASSIGN_OR_RETURN(PgResult r, c.db.Query(batch_sql, {PgParam::Text(device_id)}));
      if (r.AffectedRows() <= 0) break;
      deleted += static_cast<uint64_t>(r.AffectedRows());
    }
  }
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(c.db));
  MEMFLEET_ASSIGN_OR_RETURN(PgResult removed, c.db.Query(kPurgeDeviceRowSql, {PgParam::Text(device_id)}));
  if (removed.AffectedRows() == 0) {
    txn.Rollback();
    MEMFLEET_ASSIGN_OR_RETURN(PgResult left, c.db.Query(kDeviceHasCapturesSql, {PgParam::Text(device_id)}));
    if (left.RowCount() > 0) {
      return absl::FailedPreconditionError(absl::StrCat("captures of device ", device_id,
                                                        " arrived during the purge (its agent is back); ", deleted,
                                                        " were deleted and the device stays"));
    }
    return deleted;
  }
  MEMFLEET_RETURN_IF_ERROR(Run(c.db, kPurgeRetentionMarksSql, {PgParam::Text(device_id)}));
  MEMFLEET_RETURN_IF_ERROR(txn.Commit());
  return deleted;
}

absl::StatusOr<bool> PgStore::PutCapture(const CaptureRecord& capture) {
  MEMFLEET_ASSIGN_OR_RETURN(CaptureTimes times, ValidateCapture(capture));
  Connection& c = *writer_;
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(c.db));
  MEMFLEET_ASSIGN_OR_RETURN(bool inserted, InsertCapture(c.db, capture, times));
  if (!inserted) {
    txn.Rollback();  // nothing was written; a duplicate is not an error
    return false;
  }
  MEMFLEET_RETURN_IF_ERROR(txn.Commit());
  return true;
}

absl::StatusOr<std::vector<bool>> PgStore::PutCaptures(const std::vector<CaptureRecord>& captures) {
  MEMFLEET_ASSIGN_OR_RETURN(std::vector<CaptureTimes> times, ValidateCaptures(captures));
  Connection& c = *writer_;
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(c.db));
  std::vector<bool> inserted;
  inserted.reserve(captures.size());
  for (size_t i = 0; i < captures.size(); ++i) {
    MEMFLEET_ASSIGN_OR_RETURN(bool added, InsertCapture(c.db, captures[i], times[i]));
    inserted.push_back(added);
  }
  MEMFLEET_RETURN_IF_ERROR(txn.Commit());
  return inserted;
}

absl::Status PgStore::ReplaceReport(const std::string& capture_id, const report::Report& report,
                                    const std::string& report_json) {
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(capture_id, "capture_id"));
  Connection& c = *writer_;
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(c.db));
  // FOR UPDATE: another server replacing the same report waits for this one.
  MEMFLEET_ASSIGN_OR_RETURN(PgResult identity,
                            c.db.Query(absl::StrCat(kCaptureForReplaceSql, " FOR UPDATE"), {PgParam::Text(capture_id)}));
  if (identity.RowCount() == 0) {
    return absl::NotFoundError(absl::StrCat("no stored capture \"", capture_id, "\" to replace the report of"));
  }
  // The capture's own identity wins over whatever the new report says.
  const std::string device_id = identity.Row(0).ColumnText(0);
  const std::string captured_at = identity.Row(0).ColumnText(1);
  for (const char* sql : {kDeleteProcessReportsSql, kDeleteDeviceReportSql}) {
    MEMFLEET_RETURN_IF_ERROR(Run(c.db, sql, {PgParam::Text(capture_id)}));
  }
  MEMFLEET_RETURN_IF_ERROR(InsertReportRows(c.db, capture_id, device_id, captured_at, report, report_json));
  MEMFLEET_RETURN_IF_ERROR(Run(c.db, kRefreshPlatformSql, {PgParam::Text(device_id)}));
  return txn.Commit();
}

absl::Status PgStore::PutSweep(const SweepRecord& sweep) {
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(sweep.sweep_id, "sweep_id"));
  MEMFLEET_ASSIGN_OR_RETURN(std::string started_at, NormalizeOptionalTimestamp(sweep.started_at, "started_at"));
  MEMFLEET_ASSIGN_OR_RETURN(std::string finished_at, NormalizeOptionalTimestamp(sweep.finished_at, "finished_at"));
  Connection& c = *writer_;
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(c.db));
  MEMFLEET_RETURN_IF_ERROR(Run(c.db, kUpsertSweepSql,
                               {PgParam::Text(sweep.sweep_id), PgParam::Text(started_at),
                                PgParam::Text(sweep.selector), PgParam::Text(finished_at)}));
  // The record is the whole state: a device no longer listed is no longer part of the sweep.
  MEMFLEET_RETURN_IF_ERROR(Run(c.db, kDeleteSweepDevicesSql, {PgParam::Text(sweep.sweep_id)}));
  for (const auto& [device_id, state] : sweep.states) {
    MEMFLEET_RETURN_IF_ERROR(Run(c.db, kInsertSweepDeviceSql,
                                 {PgParam::Text(sweep.sweep_id), PgParam::Text(device_id), PgParam::Text(state)}));
  }
  return txn.Commit();
}

// ---- reads ----

absl::StatusOr<bool> PgStore::HasCapture(const std::string& capture_id) {
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<std::string> owner, CaptureDevice(capture_id));
  return owner.has_value();
}

absl::StatusOr<std::optional<std::string>> PgStore::CaptureDevice(const std::string& capture_id) {
  Connection& c = *reader_;
  absl::MutexLock lock(&c.mu);
  return StoredDeviceOf(c.db, capture_id);
}

absl::StatusOr<std::vector<DeviceSummaryRow>> PgStore::ListDevices() {
  return QueryAll(*reader_, ListDevicesSql(), {}, [](const PgRow& row) {
    DeviceSummaryRow summary;
    summary.device = ReadDevice(row, 0);
    summary.capture_count = NonNegative(row.ColumnInt64(kDeviceColumnCount));
    summary.last_capture_at = row.ColumnText(kDeviceColumnCount + 1);
    summary.last_total_kb = row.ColumnOptionalInt64(kDeviceColumnCount + 2);
    return summary;
  });
}

absl::StatusOr<std::optional<DeviceRecord>> PgStore::GetDevice(const std::string& device_id) {
  return QueryFirst(*reader_, GetDeviceSql(), {PgParam::Text(device_id)},
                    [](const PgRow& row) { return ReadDevice(row, 0); });
}

absl::StatusOr<std::optional<StoredReport>> PgStore::GetReport(const std::string& device_id, const std::string& at) {
  MEMFLEET_ASSIGN_OR_RETURN(std::string at_utc, NormalizeOptionalTimestamp(at, "at"));
  if (at_utc.empty()) return DecodeReports(QueryFirst(*reader_, kReportLatestSql, {PgParam::Text(device_id)}, ReadReport));
  return DecodeReports(
      QueryFirst(*reader_, kReportAtSql, {PgParam::Text(device_id), PgParam::Text(at_utc)}, ReadReport));
}

absl::StatusOr<std::optional<StoredReport>> PgStore::GetReportByCapture(const std::string& capture_id) {
  return DecodeReports(QueryFirst(*reader_, kReportByCaptureSql, {PgParam::Text(capture_id)}, ReadReport));
}

absl::StatusOr<std::vector<HistoryRow>> PgStore::ProcessHistory(const std::string& device_id,
                                                                const std::string& process_name,
                                                                const std::string& metric, const std::string& since,
                                                                uint32_t limit) {
  MEMFLEET_ASSIGN_OR_RETURN(const char* column, ProcessColumn(metric));
  MEMFLEET_ASSIGN_OR_RETURN(std::string since_utc, NormalizeOptionalTimestamp(since, "since"));
  return OldestFirst(QueryAll(*reader_, ProcessTrendSql(column),
                              {PgParam::Text(device_id), PgParam::Text(process_name), PgParam::Text(since_utc),
                               Limit(limit)},
                              ReadHistoryRow));
}

absl::StatusOr<std::vector<HistoryRow>> PgStore::DeviceHistory(const std::string& device_id, const std::string& metric,
                                                               const std::string& since, uint32_t limit) {
  MEMFLEET_ASSIGN_OR_RETURN(const char* column, DeviceColumn(metric));
  MEMFLEET_ASSIGN_OR_RETURN(std::string since_utc, NormalizeOptionalTimestamp(since, "since"));
  return OldestFirst(QueryAll(*reader_, DeviceTrendSql(column),
                              {PgParam::Text(device_id), PgParam::Text(since_utc), Limit(limit)}, ReadHistoryRow));
}

absl::StatusOr<std::vector<FleetValueRow>> PgStore::LatestPerDevice(const std::string& metric,
                                                                    const std::string& process_name) {
  std::string sql;
  std::vector<PgParam> params;
  if (process_name.empty()) {
    MEMFLEET_ASSIGN_OR_RETURN(const char* column, DeviceColumn(metric));
    sql = LatestDeviceFigureSql(column);
  } else {
    MEMFLEET_ASSIGN_OR_RETURN(const char* column, ProcessColumn(metric));
    sql = LatestProcessFigureSql(column);
    params.push_back(PgParam::Text(process_name));
  }
  return QueryAll(*reader_, sql, params, [](const PgRow& row) {
    FleetValueRow value;
    value.device = ReadDevice(row, 0);
    value.capture_id = row.ColumnText(kDeviceColumnCount);
    value.captured_at = row.ColumnText(kDeviceColumnCount + 1);
    value.value_kb = row.ColumnOptionalInt64(kDeviceColumnCount + 2);
    return value;
  });
}

absl::StatusOr<RetentionMarks> PgStore::GetRetentionMarks(const std::string& device_id) {
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<RetentionMarks> marks,
                            QueryFirst(*reader_, kGetRetentionMarksSql, {PgParam::Text(device_id)},
                                       [](const PgRow& row) {
                                         return RetentionMarks{row.ColumnText(0), row.ColumnText(1)};
                                       }));
  return marks.value_or(RetentionMarks{});
}

absl::Status PgStore::ForEachRawCapture(const std::string& device_id,
                                        const std::function<void(const RawCapture&)>& fn) {
  // Ids first, then one capture at a time with no lock held during `fn`: it may call ReplaceReport, and
  // only one raw blob is in memory at once.
  MEMFLEET_ASSIGN_OR_RETURN(
      std::vector<std::string> ids,
      device_id.empty() ? QueryAll(*reader_, kRawCaptureIdsAllSql, {}, ReadFirstText)
                        : QueryAll(*reader_, kRawCaptureIdsOfDeviceSql, {PgParam::Text(device_id)}, ReadFirstText));
  for (const std::string& id : ids) {
    MEMFLEET_ASSIGN_OR_RETURN(std::optional<RawCapture> raw, GetRawCapture(id));
    if (raw.has_value()) fn(*raw);  // else deleted since the listing
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<Store::RawCapture>> PgStore::GetRawCapture(const std::string& capture_id) {
  return QueryFirst(*reader_, kRawCaptureSql, {PgParam::Text(capture_id)}, ReadRawCapture<PgRow>);
}

absl::StatusOr<std::optional<SweepRecord>> PgStore::GetSweep(const std::string& sweep_id) {
  Connection& c = *reader_;
  absl::MutexLock lock(&c.mu);
  // One transaction, so the row and its states are one snapshot.
  MEMFLEET_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(c.db));
  MEMFLEET_RETURN_IF_ERROR(c.db.Exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"));
  MEMFLEET_ASSIGN_OR_RETURN(PgResult sweep_row, c.db.Query(kGetSweepSql, {PgParam::Text(sweep_id)}));
  std::optional<SweepRecord> sweep = FirstRow(sweep_row, [](const PgRow& row) {
    SweepRecord record;
    record.sweep_id = row.ColumnText(0);
    record.started_at = row.ColumnText(1);
    record.selector = row.ColumnText(2);
    record.finished_at = row.ColumnText(3);
    return record;
  });
  if (!sweep.has_value()) return sweep;
  MEMFLEET_ASSIGN_OR_RETURN(PgResult states, c.db.Query(kGetSweepDevicesSql, {PgParam::Text(sweep_id)}));
  for (int i = 0; i < states.RowCount(); ++i) {
    sweep->states.emplace(states.Row(i).ColumnText(0), states.Row(i).ColumnText(1));
  }
  MEMFLEET_RETURN_IF_ERROR(txn.Commit());
  return sweep;
}

absl::StatusOr<std::vector<SweepRecord>> PgStore::UnfinishedSweeps() {
  MEMFLEET_ASSIGN_OR_RETURN(std::vector<std::string> ids, QueryAll(*reader_, kUnfinishedSweepIdsSql, {}, ReadFirstText));
  std::vector<SweepRecord> sweeps;
  for (const std::string& id : ids) {
    MEMFLEET_ASSIGN_OR_RETURN(std::optional<SweepRecord> sweep, GetSweep(id));
    if (sweep.has_value()) sweeps.push_back(*std::move(sweep));
  }
  return sweeps;
}

absl::StatusOr<Store::Stats> PgStore::GetStats() {
  // Aggregates without GROUP BY always return their one row.
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<Stats> stats, QueryFirst(*reader_, kCaptureStatsSql, {}, [](const PgRow& row) {
    Stats capture_stats;
    capture_stats.captures = NonNegative(row.ColumnInt64(0));
    capture_stats.raw_blob_bytes = NonNegative(row.ColumnInt64(1));
    capture_stats.raw_bytes = NonNegative(row.ColumnInt64(2));
    return capture_stats;
  }));
  MEMFLEET_ASSIGN_OR_RETURN(
      std::optional<uint64_t> process_rows,
      QueryFirst(*reader_, kProcessRowCountSql, {}, [](const PgRow& row) { return NonNegative(row.ColumnInt64(0)); }));
  if (!stats.has_value() || !process_rows.has_value()) return absl::InternalError("a COUNT(*) returned no row");
  stats->process_rows = *process_rows;
  return *stats;
}

// ---- tokens ----

absl::Status PgStore::PutToken(const TokenRecord& token) {
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(token.name, "token name"));
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(token.sha256_hex, "token hash"));
  MEMFLEET_ASSIGN_OR_RETURN(std::string created_at, NormalizeTimestamp(token.created_at, "created_at"));
  Connection& c = *writer_;
  absl::MutexLock lock(&c.mu);
  absl::Status s = Run(c.db, kPutTokenSql,
                       {PgParam::Text(token.name), PgParam::Text(token.kind), PgParam::Text(token.device_id),
                        PgParam::Text(token.sha256_hex), PgParam::Text(created_at)});
  if (s.code() == absl::StatusCode::kAlreadyExists) {
    return absl::AlreadyExistsError(absl::StrCat("a token named \"", token.name, "\" exists already (revoked names stay taken)"));
  }
  if (s.code() == absl::StatusCode::kInvalidArgument) {
    return absl::InvalidArgumentError(absl::StrCat("token kind \"", token.kind, "\" is not agent, read or admin"));
  }
  return s;
}

absl::StatusOr<std::optional<TokenRecord>> PgStore::FindTokenByHash(const std::string& sha256_hex) {
  return QueryFirst(*reader_, kFindTokenSql, {PgParam::Text(sha256_hex)}, ReadToken<PgRow>);
}

absl::StatusOr<std::vector<TokenRecord>> PgStore::ListTokens() {
  return QueryAll(*reader_, kListTokensSql, {}, ReadToken<PgRow>);
}

absl::StatusOr<bool> PgStore::HasTokens() {
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<bool> row,
                            QueryFirst(*reader_, kHasTokensSql, {}, [](const PgRow&) { return true; }));
  return row.has_value();
}

absl::StatusOr<bool> PgStore::RevokeToken(const std::string& name, const std::string& revoked_at) {
  MEMFLEET_ASSIGN_OR_RETURN(std::string at, NormalizeTimestamp(revoked_at, "revoked_at"));
  Connection& c = *writer_;
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(PgResult result, c.db.Query(kRevokeTokenSql, {PgParam::Text(name), PgParam::Text(at)}));
  return result.AffectedRows() > 0;
}

// ---- baselines ----

absl::StatusOr<int64_t> PgStore::PutBaseline(const std::string& name, const std::string& imported_at,
                                             const std::string& raw_text) {
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(name, "baseline name"));
  MEMFLEET_ASSIGN_OR_RETURN(std::string at, NormalizeTimestamp(imported_at, "imported_at"));
  Connection& c = *writer_;
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(PgResult result, c.db.Query(kPutBaselineSql, {PgParam::Text(name), PgParam::Text(at),
                                                                          PgParam::Text(raw_text)}));
  if (result.RowCount() != 1) return absl::InternalError("storing the baseline returned no version");
  return result.Row(0).ColumnInt64(0);
}

absl::StatusOr<std::optional<BaselineRecord>> PgStore::GetBaseline(int64_t version) {
  if (version < 0) return absl::InvalidArgumentError("baseline version must be 1 or more (0 = the latest)");
  const auto read = [](const PgRow& row) {
    BaselineRecord b;
    b.version = row.ColumnInt64(0);
    b.name = row.ColumnText(1);
    b.imported_at = row.ColumnText(2);
    b.raw_text = row.ColumnText(3);
    return b;
  };
  if (version == 0) return QueryFirst(*reader_, kGetLatestBaselineSql, {}, read);
  return QueryFirst(*reader_, kGetBaselineSql, {PgParam::Int(version)}, read);
}

absl::StatusOr<std::vector<StoredReport>> PgStore::LatestReportsOfSweep(const std::string& sweep_id) {
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(sweep_id, "sweep_id"));
  return DecodeReports(QueryAll(*reader_, kLatestReportsOfSweepSql, {PgParam::Text(sweep_id)}, ReadReport));
}

absl::StatusOr<std::vector<StoredReport>> PgStore::LatestReportsSince(const std::string& since) {
  MEMFLEET_ASSIGN_OR_RETURN(std::string since_utc, NormalizeOptionalTimestamp(since, "since"));
  return DecodeReports(QueryAll(*reader_, kLatestReportsSinceSql, {PgParam::Text(since_utc)}, ReadReport));
}

absl::StatusOr<std::vector<StoredReport>> PgStore::LatestReportsPerBuild(const std::string& since) {
  MEMFLEET_ASSIGN_OR_RETURN(std::string since_utc, NormalizeOptionalTimestamp(since, "since"));
  return DecodeReports(QueryAll(*reader_, kLatestReportsPerBuildSql, {PgParam::Text(since_utc)}, ReadReport));
}

// ---- labels ----

absl::StatusOr<std::vector<LabelledCapture>> PgStore::LabelledCaptures(const LabelSet& all_of) {
  if (all_of.empty()) return absl::InvalidArgumentError("no label to look captures up by");
  const std::vector<StoredLabel> terms = StoredLabelsOf(all_of);
  std::vector<PgParam> params;
  for (const StoredLabel& term : terms) {
    params.push_back(PgParam::Text(term.key));
    params.push_back(PgParam::Text(term.value));
    params.push_back(PgParam::Text(term.source));
  }
  return QueryAll(*reader_, LabelledCapturesSql(terms.size()), params, [](const PgRow& row) {
    LabelledCapture capture;
    capture.capture_id = row.ColumnText(0);
    capture.device_id = row.ColumnText(1);
    capture.captured_at = row.ColumnText(2);
    capture.sweep_id = row.ColumnText(3);
    capture.build_fingerprint = row.ColumnText(4);  // NULL reads as ""
    return capture;
  });
}

absl::StatusOr<LabelSet> PgStore::CaptureLabels(const std::string& capture_id) {
  MEMFLEET_ASSIGN_OR_RETURN(std::vector<StoredLabel> rows,
                            QueryAll(*reader_, kCaptureLabelsSql, {PgParam::Text(capture_id)}, [](const PgRow& row) {
                              return StoredLabel{row.ColumnText(0), row.ColumnText(1), row.ColumnText(2)};
                            }));
  return LabelSetOf(std::move(rows));
}

absl::StatusOr<std::optional<int64_t>> PgStore::CaptureFigure(const std::string& capture_id, const std::string& metric,
                                                              const std::string& process_name) {
  const auto read = [](const PgRow& row) { return row.ColumnOptionalInt64(0); };
  absl::StatusOr<std::optional<std::optional<int64_t>>> row;
  if (process_name.empty()) {
    MEMFLEET_ASSIGN_OR_RETURN(const char* column, DeviceColumn(metric));
    row = QueryFirst(*reader_, CaptureDeviceFigureSql(column), {PgParam::Text(capture_id)}, read);
  } else {
    MEMFLEET_ASSIGN_OR_RETURN(const char* column, ProcessColumn(metric));
    row = QueryFirst(*reader_, CaptureProcessFigureSql(column), {PgParam::Text(capture_id), PgParam::Text(process_name)},
                     read);
  }
  if (!row.ok()) return row.status();
  return row->has_value() ? **row : std::nullopt;
}

// ---- a history copied in (memfleet-server migrate) ----

namespace {

// Canonical times compare as text; GREATEST keeps a mark from moving back, '' (none) being the least.
constexpr char kRecordRetentionSql[] =
    "INSERT INTO device_retention (device_id, hourly_before, daily_before) VALUES ($1, $2, $3) "
    "ON CONFLICT (device_id) DO UPDATE SET hourly_before = GREATEST(device_retention.hourly_before, "
    "excluded.hourly_before), daily_before = GREATEST(device_retention.daily_before, excluded.daily_before)";
constexpr char kHistoryRowCountsSql[] =
    "SELECT (SELECT COUNT(*) FROM sweeps), (SELECT COUNT(*) FROM sweep_devices), "
    "(SELECT COUNT(*) FROM capture_labels), (SELECT COUNT(*) FROM device_retention)";

}  // namespace

absl::Status PgStore::RecordRetention(const std::string& device_id, const RetentionMarks& marks) {
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(device_id, "device_id"));
  MEMFLEET_ASSIGN_OR_RETURN(std::string hourly, NormalizeOptionalTimestamp(marks.hourly_before, "hourly_before"));
  MEMFLEET_ASSIGN_OR_RETURN(std::string daily, NormalizeOptionalTimestamp(marks.daily_before, "daily_before"));
  Connection& c = *writer_;
  absl::MutexLock lock(&c.mu);
  return Run(c.db, kRecordRetentionSql, {PgParam::Text(device_id), PgParam::Text(hourly), PgParam::Text(daily)});
}

absl::StatusOr<HistoryRowCounts> PgStore::CountHistoryRows() {
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<HistoryRowCounts> counts,
                            QueryFirst(*reader_, kHistoryRowCountsSql, {}, [](const PgRow& row) {
                              return HistoryRowCounts{NonNegative(row.ColumnInt64(0)), NonNegative(row.ColumnInt64(1)),
                                                      NonNegative(row.ColumnInt64(2)), NonNegative(row.ColumnInt64(3))};
                            }));
  if (!counts.has_value()) return absl::InternalError("the row counts returned no row");
  return *counts;
}

// ---- re-accounting shared between servers ----

namespace {

// Serializes joining and starting runs across servers ("mfra"); distinct from the migration lock.
constexpr char kReaccountRunLockSql[] = "SELECT pg_advisory_xact_lock(1835426401)";
constexpr char kOpenReaccountRunSql[] =
    "SELECT run_id FROM reaccount_runs WHERE device_id = $1 AND finished_at = '' ORDER BY run_id LIMIT 1";
constexpr char kStartReaccountRunSql[] =
    "INSERT INTO reaccount_runs (device_id, started_at) VALUES ($1, $2) RETURNING run_id";
constexpr char kListReaccountClaimsSql[] =
    "INSERT INTO reaccount_claims (run_id, capture_id, device_id, captured_at) "
    "SELECT $1, capture_id, device_id, captured_at FROM captures WHERE $2 = '' OR device_id = $2";
// A batch no live connection holds, oldest first per device (so a device's deltas follow their keyframe).
// SKIP LOCKED: two servers claiming at once take different rows instead of waiting for each other.
constexpr char kClaimReaccountBatchSql[] =
    "UPDATE reaccount_claims SET claimed_by = pg_backend_pid() WHERE run_id = $1 AND capture_id IN ("
    "SELECT capture_id FROM reaccount_claims WHERE run_id = $1 AND NOT done AND (claimed_by IS NULL OR "
    "claimed_by NOT IN (SELECT pid FROM pg_stat_activity WHERE pid IS NOT NULL)) "
    "ORDER BY device_id, captured_at, capture_id LIMIT $2 FOR UPDATE SKIP LOCKED) "
    "RETURNING capture_id, device_id, captured_at";
constexpr char kReaccountDoneSql[] = "UPDATE reaccount_claims SET done = TRUE WHERE run_id = $1 AND capture_id = $2";
constexpr char kFinishReaccountRunSql[] =
    "UPDATE reaccount_runs SET finished_at = $2 WHERE run_id = $1 AND finished_at = '' AND NOT EXISTS "
    "(SELECT 1 FROM reaccount_claims WHERE run_id = $1 AND NOT done)";
constexpr int64_t kReaccountBatch = 8;

struct ClaimedCapture {
  std::string capture_id;
  std::string device_id;
  std::string captured_at;
};

absl::StatusOr<PgStore::ReaccountRun> JoinOrStartReaccountRun(PgConnection& db, const std::string& device_id,
                                                              const std::string& started_at) {
  MEMFLEET_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(db));
  MEMFLEET_RETURN_IF_ERROR(Run(db, kReaccountRunLockSql, {}));
  MEMFLEET_ASSIGN_OR_RETURN(PgResult open, db.Query(kOpenReaccountRunSql, {PgParam::Text(device_id)}));
  PgStore::ReaccountRun run;
  if (open.RowCount() > 0) {
    run.run_id = open.Row(0).ColumnInt64(0);
    run.joined = true;
  } else {
    MEMFLEET_ASSIGN_OR_RETURN(PgResult started,
                              db.Query(kStartReaccountRunSql, {PgParam::Text(device_id), PgParam::Text(started_at)}));
    if (started.RowCount() != 1) return absl::InternalError("starting a re-accounting run returned no id");
    run.run_id = started.Row(0).ColumnInt64(0);
    MEMFLEET_RETURN_IF_ERROR(Run(db, kListReaccountClaimsSql, {PgParam::Int(run.run_id), PgParam::Text(device_id)}));
  }
  MEMFLEET_RETURN_IF_ERROR(txn.Commit());
  return run;
}

absl::StatusOr<std::vector<ClaimedCapture>> ClaimReaccountBatch(PgConnection& db, int64_t run_id) {
  MEMFLEET_ASSIGN_OR_RETURN(PgResult claimed,
                            db.Query(kClaimReaccountBatchSql, {PgParam::Int(run_id), PgParam::Int(kReaccountBatch)}));
  std::vector<ClaimedCapture> batch = AllRows(claimed, [](const PgRow& row) {
    return ClaimedCapture{row.ColumnText(0), row.ColumnText(1), row.ColumnText(2)};
  });
  // RETURNING keeps no order.
  std::sort(batch.begin(), batch.end(), [](const ClaimedCapture& a, const ClaimedCapture& b) {
    return std::tie(a.device_id, a.captured_at, a.capture_id) < std::tie(b.device_id, b.captured_at, b.capture_id);
  });
  return batch;
}

}  // namespace

absl::StatusOr<PgStore::ReaccountRun> PgStore::ForEachClaimedRawCapture(
    const std::string& device_id, const std::string& started_at, const std::function<void(const RawCapture&)>& fn) {
  MEMFLEET_ASSIGN_OR_RETURN(std::string at, NormalizeTimestamp(started_at, "started_at"));
  ReaccountRun run;
  {
    absl::MutexLock lock(&writer_->mu);
    MEMFLEET_ASSIGN_OR_RETURN(run, JoinOrStartReaccountRun(writer_->db, device_id, at));
  }
  for (;;) {
    std::vector<ClaimedCapture> batch;
    {
      absl::MutexLock lock(&writer_->mu);
      MEMFLEET_ASSIGN_OR_RETURN(batch, ClaimReaccountBatch(writer_->db, run.run_id));
      if (batch.empty()) {
        MEMFLEET_RETURN_IF_ERROR(Run(writer_->db, kFinishReaccountRunSql, {PgParam::Int(run.run_id), PgParam::Text(at)}));
        return run;
      }
    }
    for (const ClaimedCapture& claimed : batch) {
      MEMFLEET_ASSIGN_OR_RETURN(std::optional<RawCapture> raw, GetRawCapture(claimed.capture_id));
      if (raw.has_value()) fn(*raw);  // else deleted since it was listed
      absl::MutexLock lock(&writer_->mu);
      MEMFLEET_RETURN_IF_ERROR(
          Run(writer_->db, kReaccountDoneSql, {PgParam::Int(run.run_id), PgParam::Text(claimed.capture_id)}));
    }
  }
}

}  // namespace memfleet::storage
