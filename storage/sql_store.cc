#include "storage/sql_store.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/figure_tier.h"
#include "common/status_macros.h"
#include "report/report.h"
#include "storage/process_block.h"
#include "storage/report_codec.h"
#include "storage/sql_store_internal.h"
#include "storage/store_rows.h"
#include "storage/timestamp.h"

namespace memfleet::storage {
namespace {

using sql_store_internal::kMaxCachedNames;
using sql_store_internal::kWriteAttempts;
using sql_store_internal::ReadFirstText;

// ---- SQL ----

// UpsertDevice overwrites the identity fields; an empty platform or last_seen_at keeps the stored one,
// last_seen_at never moves backwards (canonical times compare as text), dropped_captures adds up, and
// clock_skew_s is the latest Hello's (NULL: it carried no time). A retired device is active again: its agent
// is back.
std::string UpsertDeviceSql(SqlDialect d) {
  return absl::StrCat(
      "INSERT INTO devices (device_id, model, soc, build_fingerprint, kernel, agent_version, page_size, platform, "
      "last_seen_at, dropped_captures, clock_skew_s, manufacturer, build_type, abi, android_sdk, access, selinux, "
      "agent_tier) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18) "
      "ON CONFLICT (device_id) DO UPDATE SET model = excluded.model, soc = excluded.soc, "
      "build_fingerprint = excluded.build_fingerprint, kernel = excluded.kernel, "
      "agent_version = excluded.agent_version, page_size = excluded.page_size, "
      "platform = CASE WHEN excluded.platform = '' THEN devices.platform ELSE excluded.platform END, "
      "last_seen_at = ",
      GreatestOf(d),
      "(devices.last_seen_at, excluded.last_seen_at), "
      "dropped_captures = devices.dropped_captures + excluded.dropped_captures, clock_skew_s = excluded.clock_skew_s, "
      "manufacturer = excluded.manufacturer, build_type = excluded.build_type, abi = excluded.abi, "
      "android_sdk = excluded.android_sdk, access = excluded.access, selinux = excluded.selinux, "
      "agent_tier = excluded.agent_tier, retired_at = ''");
}

// A device retired already keeps the time it was first retired.
constexpr char kRetireDeviceSql[] =
    "UPDATE devices SET retired_at = CASE WHEN retired_at = '' THEN ?2 ELSE retired_at END WHERE device_id = ?1";

// PurgeDevice's next batch: the deltas first, then the rest, which no delta needs any more.
std::string PurgeBatchSql(bool deltas) {
  return absl::StrCat("SELECT capture_id FROM captures WHERE device_id = ?1",
                      deltas ? " AND raw_base IS NOT NULL AND raw_base != ''" : "", " LIMIT ",
                      CaptureStore::kPurgeBatchCaptures);
}
// The device's own rows once its captures are gone; the devices row only while none came back meanwhile.
constexpr char kPurgeDeviceRowSql[] =
    "DELETE FROM devices WHERE device_id = ?1 AND NOT EXISTS (SELECT 1 FROM captures WHERE device_id = ?1)";
constexpr char kPurgeRetentionMarksSql[] = "DELETE FROM device_retention WHERE device_id = ?1";

// A column of device ?1's latest report.
std::string LatestReportSql(const char* column) {
  return absl::StrCat("(SELECT r.", column,
                      " FROM device_reports AS r WHERE r.device_id = ?1 ORDER BY r.captured_at DESC, r.capture_id DESC "
                      "LIMIT 1)");
}

// DeviceRecord.platform and .tier are those of the device's latest report (a tier NULL, unknown, when that
// report was stored before tiers were).
std::string RefreshFromLatestReportSql() {
  return absl::StrCat("UPDATE devices SET platform = COALESCE(", LatestReportSql("platform"),
                      ", platform), tier = ", LatestReportSql("tier"), " WHERE device_id = ?1");
}

// A stored capture's device, at ?2 (when it was received): a device the server never registered still gets
// a devices row, so the device-driven fleet queries see it, and its platform and tier are its latest
// report's as RefreshFromLatestReportSql sets them. One statement, not an upsert and that UPDATE: a batch
// writes each device's row once (on PostgreSQL one statement less to run and one row version less). The
// batch has just stored a report of the device, so the latest report is there.
std::string TouchDeviceSql(SqlDialect d) {
  return absl::StrCat("INSERT INTO devices (device_id, last_seen_at, platform, tier) VALUES (?1, ?2, COALESCE(",
                      LatestReportSql("platform"), ", ''), ", LatestReportSql("tier"),
                      ") ON CONFLICT (device_id) DO UPDATE SET last_seen_at = ", GreatestOf(d),
                      "(devices.last_seen_at, excluded.last_seen_at), platform = excluded.platform, "
                      "tier = excluded.tier");
}

// ON CONFLICT (capture_id) DO NOTHING, not INSERT OR IGNORE: OR IGNORE would also swallow NOT NULL
// violations and report them as duplicates. On PostgreSQL a concurrent insert of the same id by another
// server waits for that one's COMMIT, then does nothing.
constexpr char kInsertCaptureSql[] =
    "INSERT INTO captures (capture_id, device_id, captured_at, received_at, sweep_id, raw_codec, raw_bytes, raw_blob, "
    "build_fingerprint, raw_base) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) ON CONFLICT (capture_id) DO NOTHING";

constexpr char kDeviceReportColumns[] =
    "capture_id, device_id, captured_at, platform, ddr_kb, ddr_estimated, mem_total_kb, gcma_kb, static_reserved_kb, "
    "kernel_cma_kb, kernel_kb, processes_kb, total_kb, process_count, processes, tier";

std::string InsertDeviceReportSql() {
  return absl::StrCat("INSERT INTO device_reports (", kDeviceReportColumns,
                      ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)");
}

// ReplaceReport's: an upsert, so that a replaced report keeps its capture_no.
std::string UpsertDeviceReportSql() {
  return absl::StrCat(
      InsertDeviceReportSql(),
      " ON CONFLICT (capture_id) DO UPDATE SET device_id = excluded.device_id, captured_at = excluded.captured_at, "
      "platform = excluded.platform, ddr_kb = excluded.ddr_kb, ddr_estimated = excluded.ddr_estimated, "
      "mem_total_kb = excluded.mem_total_kb, gcma_kb = excluded.gcma_kb, static_reserved_kb = "
      "excluded.static_reserved_kb, "
      "kernel_cma_kb = excluded.kernel_cma_kb, kernel_kb = excluded.kernel_kb, processes_kb = excluded.processes_kb, "
      "total_kb = excluded.total_kb, process_count = excluded.process_count, processes = excluded.processes, "
      "tier = excluded.tier "
      "RETURNING capture_no");
}

// A new capture's report frame; ?3 names the capture its report is compressed against (NULL: the built-in
// dictionary). Numbers by subquery, so the statement needs no answer from the one before it.
constexpr char kInsertReportBlobSql[] =
    "INSERT INTO report_blobs (capture_no, report_zstd, base_no) VALUES ((SELECT capture_no FROM device_reports "
    "WHERE capture_id = ?1), ?2, (SELECT capture_no FROM device_reports WHERE capture_id = ?3))";
// PostgreSQL's: a new capture's report and its frame in one statement (?1-?16 the report's columns, ?17 the
// frame, ?18 the capture it is compressed against or NULL), the frame numbered by what the report's INSERT
// returns; one statement a capture less to start and run. SQLite has no INSERT inside WITH: empty, the two
// statements above.
std::string InsertReportAndFrameSql(SqlDialect d) {
  if (d != SqlDialect::kPostgres) return std::string();
  return absl::StrCat("WITH r AS (", InsertDeviceReportSql(),
                      " RETURNING capture_no) INSERT INTO report_blobs (capture_no, report_zstd, base_no) SELECT "
                      "r.capture_no, CAST(?17 AS BYTEA), (SELECT capture_no FROM device_reports WHERE capture_id = "
                      "?18) FROM r");
}
constexpr char kPutReportBlobSql[] =
    "INSERT INTO report_blobs (capture_no, report_zstd, base_no) VALUES (?1, ?2, ?3) "
    "ON CONFLICT (capture_no) DO UPDATE SET report_zstd = excluded.report_zstd, base_no = excluded.base_no";

// A keyframe's report, as its deltas' reports are stored against: its own frame (a keyframe's report is
// never stored against another).
constexpr char kKeyframeReportSql[] =
    "SELECT kb.report_zstd FROM device_reports AS kr JOIN report_blobs AS kb ON kb.capture_no = kr.capture_no "
    "WHERE kr.capture_id = ?1 AND kb.base_no IS NULL";
// The report capture ?1's report is stored against: its keyframe's. None for a keyframe, or when the
// keyframe has no report.
constexpr char kReportBaseSql[] =
    "SELECT kb.capture_no, kb.report_zstd FROM captures AS c JOIN device_reports AS kr ON kr.capture_id = c.raw_base "
    "JOIN report_blobs AS kb ON kb.capture_no = kr.capture_no WHERE c.capture_id = ?1 AND kb.base_no IS NULL";
// The reports stored against capture ?1's (capture_no ?2): its deltas', found through captures_by_raw_base.
constexpr char kReportDependantsSql[] =
    "SELECT b.capture_no, c.capture_id, b.report_zstd FROM captures AS c JOIN device_reports AS r ON "
    "r.capture_id = c.capture_id JOIN report_blobs AS b ON b.capture_no = r.capture_no "
    "WHERE c.raw_base = ?1 AND b.base_no = ?2";
constexpr char kOwnReportBlobSql[] = "SELECT report_zstd FROM report_blobs WHERE capture_no = ?1 AND base_no IS NULL";
constexpr char kCaptureNoSql[] = "SELECT capture_no FROM device_reports WHERE capture_id = ?1";
constexpr char kRewriteReportBlobSql[] = "UPDATE report_blobs SET report_zstd = ?2 WHERE capture_no = ?1";

constexpr char kAddProcessNameSql[] = "INSERT INTO process_names (name) VALUES (?1) ON CONFLICT (name) DO NOTHING";
constexpr char kProcessNameNoSql[] = "SELECT name_no FROM process_names WHERE name = ?1";

constexpr char kInsertLabelSql[] =
    "INSERT INTO capture_labels (capture_id, key, value, source) VALUES (?1, ?2, ?3, ?4)";
constexpr char kCaptureDeviceSql[] = "SELECT device_id FROM captures WHERE capture_id = ?1";

std::string CaptureForReplaceSql(SqlDialect d) {
  // FOR UPDATE: another server replacing the same report waits for this one (SQLite has one writer).
  return absl::StrCat("SELECT device_id, captured_at FROM captures WHERE capture_id = ?1",
                      d == SqlDialect::kPostgres ? " FOR UPDATE" : "");
}

constexpr char kRawCaptureIdsAllSql[] = "SELECT capture_id FROM captures ORDER BY captured_at, capture_id";
constexpr char kRawCaptureIdsOfDeviceSql[] =
    "SELECT capture_id FROM captures WHERE device_id = ?1 ORDER BY captured_at, capture_id";
constexpr char kRawCaptureSql[] =
    "SELECT capture_id, device_id, captured_at, raw_codec, raw_blob, raw_base FROM captures WHERE capture_id = ?1";

constexpr char kCaptureStatsSql[] =
    "SELECT COUNT(*), COALESCE(SUM(length(raw_blob)), 0), COALESCE(SUM(raw_bytes), 0) FROM captures";
constexpr char kProcessRowCountSql[] = "SELECT COALESCE(SUM(process_count), 0) FROM device_reports";

// The pairs come from a scan of captures_by_device_build_time alone, and each pair's latest capture is
// the last entry of its range there; the build is taken from the pair (the index), never from the table
// row, where SQLite keeps it after raw_blob (hence SQLite's index hint). IS NOT DISTINCT FROM: captures
// stored before SQLite's schema 8 have a NULL build; NULLS FIRST, where SQLite sorts NULL.
std::string LatestReportsPerBuildSql(SqlDialect d) {
  const char* hint = d == SqlDialect::kSqlite ? " INDEXED BY captures_by_device_build_time" : "";
  return absl::StrCat(
      "WITH pairs AS (SELECT DISTINCT device_id, build_fingerprint FROM captures", hint,
      ") "
      "SELECT c.capture_id, c.device_id, c.captured_at, (SELECT b.report_zstd FROM report_blobs AS b WHERE "
      "b.capture_no = r.capture_no), p.build_fingerprint, (SELECT b.base_no FROM report_blobs AS b WHERE b.capture_no "
      "= r.capture_no), (SELECT k.report_zstd FROM report_blobs AS b JOIN report_blobs AS k ON k.capture_no = "
      "b.base_no WHERE b.capture_no = r.capture_no) FROM pairs p JOIN captures c ON c.capture_id = (SELECT "
      "c2.capture_id FROM captures c2",
      hint,
      " WHERE c2.device_id = p.device_id AND c2.build_fingerprint IS NOT "
      "DISTINCT FROM p.build_fingerprint ORDER BY c2.captured_at DESC, c2.capture_id DESC LIMIT 1) "
      "JOIN device_reports r ON r.capture_id = c.capture_id WHERE c.captured_at >= ?1 "
      "ORDER BY p.device_id, p.build_fingerprint NULLS FIRST");
}

// Canonical times compare as text; the larger keeps a mark from moving back, '' (none) being the least.
std::string RecordRetentionSql(SqlDialect d) {
  return absl::StrCat(
      "INSERT INTO device_retention (device_id, hourly_before, daily_before) VALUES (?1, ?2, ?3) "
      "ON CONFLICT (device_id) DO UPDATE SET hourly_before = ",
      GreatestOf(d), "(device_retention.hourly_before, excluded.hourly_before), daily_before = ", GreatestOf(d),
      "(device_retention.daily_before, excluded.daily_before)");
}

// ---- the write path ----

// The figures of `p` in the block's order (kProcessFigureNames).
std::array<std::optional<int64_t>, kProcessFigureCount> FiguresOf(const report::ProcessReport& p) {
  return {p.total_kb,           p.pss_kb,          p.swap_pss_kb,    p.gfxdev_kb, p.gl_kb, p.dma_kb,
          p.native_graphics_kb, p.non_graphics_kb, p.graphics_dma_kb};
}

std::vector<std::string> ProcessNamesOf(const report::Report& report) {
  std::vector<std::string> names;
  for (const auto& [pid, p] : report.processes) names.push_back(p.name);
  return names;
}

absl::StatusOr<std::string> ProcessBlockOf(const report::Report& report, const std::map<std::string, int64_t>& names) {
  std::vector<ProcessSample> samples;
  samples.reserve(report.processes.size());
  for (const auto& [pid, p] : report.processes) {
    auto it = names.find(p.name);
    if (it == names.end()) return absl::InternalError(absl::StrCat("process name \"", p.name, "\" has no number"));
    // The map key, not p.pid: it is what makes a capture's (name, pid) unique.
    samples.push_back({it->second, pid, FiguresOf(p)});
  }
  return EncodeProcessBlock(std::move(samples));
}

// A report's tier as device_reports.tier keeps it: the report's model reads any other name as the
// kernel tier (report/report_json.cc), and so does the store.
const char* TierToStore(const std::string& tier) { return tier == kTierDumpsys ? kTierDumpsys : kTierKernel; }

// The parameters of a device_reports row, in kDeviceReportColumns' order; its tier the report's unless
// `stored_tier` is given (CaptureRecord::stored_tier).
SqlParams DeviceReportParams(const std::string& capture_id, const std::string& device_id,
                             const std::string& captured_at, const report::Report& report, std::string block,
                             const std::optional<std::string>& stored_tier = std::nullopt) {
  const report::DeviceReport& d = report.device;
  return {SqlValue::Text(capture_id),
          SqlValue::Text(device_id),
          SqlValue::Text(captured_at),
          SqlValue::Text(report::PlatformName(report.platform)),
          SqlValue::OptionalInt(d.ddr_kb),
          SqlValue::Int(d.ddr_estimated ? 1 : 0),
          SqlValue::OptionalInt(d.mem_total_kb),
          SqlValue::OptionalInt(d.gcma_kb),
          SqlValue::OptionalInt(d.static_reserved_kb),
          SqlValue::OptionalInt(d.kernel_cma_kb),
          SqlValue::OptionalInt(d.kernel_kb),
          SqlValue::OptionalInt(d.processes_kb),
          SqlValue::OptionalInt(d.total_kb),
          SqlValue::Int(static_cast<int64_t>(report.processes.size())),
          SqlValue::Blob(block),
          stored_tier.has_value() ? SqlValue::TextOrNull(*stored_tier) : SqlValue::Text(TierToStore(d.tier))};
}

// `report_json` as stored against `base_json` (its keyframe's report) when there is one that decompresses;
// else a dictionary frame. Returns the frame and whether it is against the base.
std::pair<std::string, bool> EncodeAgainst(const std::string& report_json,
                                           const std::optional<std::string>& base_zstd) {
  if (base_zstd.has_value()) {
    absl::StatusOr<std::string> base_json = DecompressReportJson(*base_zstd);
    if (base_json.ok()) return {CompressReportJsonAgainst(report_json, *base_json), true};
  }
  return {CompressReportJson(report_json), false};
}

}  // namespace

// A capture of PutCaptures' batch, as its transaction goes.
struct SqlStore::NewCapture {
  const CaptureRecord* record = nullptr;
  CaptureTimes times;
  int64_t inserted = 0;                  // rows the captures INSERT added: 1 new, 0 already stored
  std::optional<std::string> base_zstd;  // its keyframe's report frame, when stored before this batch
};

// ---- opening ----

SqlStore::SqlStore(std::shared_ptr<SqlConnectionPool> writers, std::shared_ptr<SqlConnectionPool> readers, bool shared)
    : dialect_(writers->dialect()),
      shared_(shared),
      sql_(std::make_unique<const Sql>(dialect_)),
      writers_(std::move(writers)),
      readers_(std::move(readers)) {}

SqlStore::~SqlStore() = default;

SqlStore::Sql::Sql(SqlDialect d)
    : upsert_device(UpsertDeviceSql(d)),
      touch_device(TouchDeviceSql(d)),
      refresh_from_latest_report(RefreshFromLatestReportSql()),
      capture_for_replace(CaptureForReplaceSql(d)),
      insert_device_report(InsertDeviceReportSql()),
      insert_report_and_frame(InsertReportAndFrameSql(d)),
      upsert_device_report(UpsertDeviceReportSql()),
      latest_reports_per_build(LatestReportsPerBuildSql(d)),
      record_retention(RecordRetentionSql(d)),
      // Keys checked at COMMIT, so a keyframe and its deltas may go in any order; one a remaining delta
      // needs fails the transaction (raw_base has no ON DELETE action; on PostgreSQL it is DEFERRABLE).
      defer_foreign_keys(d == SqlDialect::kSqlite ? "PRAGMA defer_foreign_keys = ON" : "SET CONSTRAINTS ALL DEFERRED") {
}

// ---- process names ----

absl::StatusOr<SqlStore::NameNumbers> SqlStore::ProcessNameNumbers(SqlConnection& db,
                                                                   const std::vector<std::string>& names) {
  NameNumbers numbers;
  std::set<std::string> missing;
  {
    absl::MutexLock lock(&names_mu_);
    for (const std::string& name : names) {
      auto it = name_numbers_.find(name);
      if (it != name_numbers_.end()) {
        numbers.emplace(name, it->second);
      } else {
        missing.insert(name);
      }
    }
  }
  if (missing.empty()) return numbers;
  // A transaction of its own, committed before any capture names them: a capture's transaction then
  // holds no lock on a new name while it stores (two servers adding names in another order would wait on
  // each other), and a number cached here is committed. In name order for the same reason.
  NameNumbers added;
  {
    MEMFLEET_ASSIGN_OR_RETURN(SqlTransaction txn, SqlTransaction::Begin(db));
    for (const std::string& name : missing) {
      MEMFLEET_RETURN_IF_ERROR(db.Send(kAddProcessNameSql, {SqlValue::Text(name)}));
      MEMFLEET_RETURN_IF_ERROR(db.Send(kProcessNameNoSql, {SqlValue::Text(name)},
                                       [&added, &name](const SqlRow& row) { added[name] = row.ColumnInt64(0); }));
    }
    MEMFLEET_RETURN_IF_ERROR(txn.Commit());
  }
  if (added.size() != missing.size()) return absl::InternalError("a process name was stored without a number");
  absl::MutexLock lock(&names_mu_);
  // A farm's names are a few thousand; a flood of made-up ones must not grow the cache for ever.
  if (name_numbers_.size() + added.size() > kMaxCachedNames) name_numbers_.clear();
  for (const auto& [name, number] : added) {
    name_numbers_.emplace(name, number);
    numbers.emplace(name, number);
  }
  return numbers;
}

absl::StatusOr<std::optional<int64_t>> SqlStore::KnownNameNumber(const std::string& name) {
  {
    absl::MutexLock lock(&names_mu_);
    auto it = name_numbers_.find(name);
    if (it != name_numbers_.end()) return std::optional<int64_t>(it->second);
  }
  std::optional<int64_t> number;
  {
    SqlConnectionPool::Lease db = readers_->Acquire();
    MEMFLEET_ASSIGN_OR_RETURN(number, QueryFirst(*db, kProcessNameNoSql, {SqlValue::Text(name)},
                                                 [](const SqlRow& row) { return row.ColumnInt64(0); }));
  }
  // What a reader sees is committed: it may be cached.
  if (number.has_value()) {
    absl::MutexLock lock(&names_mu_);
    if (name_numbers_.size() < kMaxCachedNames) name_numbers_.emplace(name, *number);
  }
  return number;
}

// ---- writes ----

absl::Status SqlStore::UpsertDevice(const DeviceRecord& device) {
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(device.device_id, "device_id"));
  MEMFLEET_ASSIGN_OR_RETURN(std::string last_seen_at, NormalizeOptionalTimestamp(device.last_seen_at, "last_seen_at"));
  SqlConnectionPool::Lease db = writers_->Acquire();
  return RunSql(*db, sql_->upsert_device,
                {SqlValue::Text(device.device_id), SqlValue::Text(device.model), SqlValue::Text(device.soc),
                 SqlValue::Text(device.build_fingerprint), SqlValue::Text(device.kernel),
                 SqlValue::Text(device.agent_version), SqlValue::Int(device.page_size), SqlValue::Text(device.platform),
                 SqlValue::Text(last_seen_at), SqlValue::Int(DroppedCapturesToStore(device.dropped_captures)),
                 SqlValue::OptionalInt(device.clock_skew_s), SqlValue::Text(device.manufacturer),
                 SqlValue::Text(device.build_type), SqlValue::Text(device.abi), SqlValue::Text(device.android_sdk),
                 SqlValue::Text(device.access), SqlValue::Text(device.selinux), SqlValue::Text(device.agent_tier)})
      .status();
}

absl::StatusOr<bool> SqlStore::RetireDevice(const std::string& device_id, const std::string& retired_at) {
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(device_id, "device_id"));
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(retired_at, "retired_at"));
  MEMFLEET_ASSIGN_OR_RETURN(std::string at, NormalizeOptionalTimestamp(retired_at, "retired_at"));
  SqlConnectionPool::Lease db = writers_->Acquire();
  MEMFLEET_ASSIGN_OR_RETURN(int64_t changed,
                            RunSql(*db, kRetireDeviceSql, {SqlValue::Text(device_id), SqlValue::Text(at)}));
  return changed == 1;
}

absl::StatusOr<uint64_t> SqlStore::PurgeDevice(const std::string& device_id) {
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(device_id, "device_id"));
  uint64_t deleted = 0;
  for (const std::string& batch_sql : {PurgeBatchSql(true), PurgeBatchSql(false)}) {
    while (true) {
      std::vector<std::string> ids;
      {
        SqlConnectionPool::Lease db = writers_->Acquire();
        MEMFLEET_ASSIGN_OR_RETURN(ids, QueryAll(*db, batch_sql, {SqlValue::Text(device_id)}, ReadFirstText));
      }
      if (ids.empty()) break;
      // Retention's deletion: report, process block, labels and raw blob of each, one transaction a batch.
      MEMFLEET_ASSIGN_OR_RETURN(size_t gone, DeleteCaptures(ids));
      if (gone == 0) return absl::InternalError(absl::StrCat("purging device ", device_id, " deleted nothing"));
      deleted += gone;
    }
  }
  MEMFLEET_ASSIGN_OR_RETURN(bool removed, RemoveDeviceRows(device_id));
  if (!removed) {
    SqlConnectionPool::Lease db = writers_->Acquire();
    MEMFLEET_ASSIGN_OR_RETURN(std::vector<std::string> left,
                              QueryAll(*db, PurgeBatchSql(false), {SqlValue::Text(device_id)}, ReadFirstText));
    if (!left.empty()) {
      return absl::FailedPreconditionError(absl::StrCat("captures of device ", device_id,
                                                        " arrived during the purge (its agent is back); ", deleted,
                                                        " were deleted and the device stays"));
    }
  }
  return deleted;
}

absl::StatusOr<bool> SqlStore::RemoveDeviceRows(const std::string& device_id) {
  SqlConnectionPool::Lease db = writers_->Acquire();
  MEMFLEET_ASSIGN_OR_RETURN(SqlTransaction txn, SqlTransaction::Begin(*db));
  MEMFLEET_ASSIGN_OR_RETURN(int64_t removed, RunSql(*db, kPurgeDeviceRowSql, {SqlValue::Text(device_id)}));
  if (removed == 0) {
    txn.Rollback();
    return false;
  }
  MEMFLEET_RETURN_IF_ERROR(RunSql(*db, kPurgeRetentionMarksSql, {SqlValue::Text(device_id)}).status());
  MEMFLEET_RETURN_IF_ERROR(txn.Commit());
  return true;
}

absl::StatusOr<bool> SqlStore::PutCapture(const CaptureRecord& capture) {
  MEMFLEET_ASSIGN_OR_RETURN(CaptureTimes times, ValidateCapture(capture));
  MEMFLEET_ASSIGN_OR_RETURN(std::vector<bool> inserted, StoreValidCaptures({{&capture, std::move(times)}}));
  return inserted.size() == 1 && inserted[0];
}

absl::StatusOr<std::vector<bool>> SqlStore::PutCaptures(const std::vector<CaptureRecord>& captures) {
  MEMFLEET_ASSIGN_OR_RETURN(std::vector<CaptureTimes> times, ValidateCaptures(captures));
  std::vector<ValidCapture> valid;
  valid.reserve(captures.size());
  for (size_t i = 0; i < captures.size(); ++i) valid.push_back({&captures[i], std::move(times[i])});
  return StoreValidCaptures(valid);
}

absl::StatusOr<std::vector<bool>> SqlStore::StoreValidCaptures(const std::vector<ValidCapture>& captures) {
  std::vector<std::string> names;
  for (const ValidCapture& c : captures) {
    for (std::string& name : ProcessNamesOf(c.record->report)) names.push_back(std::move(name));
  }
  SqlConnectionPool::Lease db = writers_->Acquire();
  MEMFLEET_ASSIGN_OR_RETURN(NameNumbers numbers, ProcessNameNumbers(*db, names));
  // Two servers' transactions storing the same captures in other orders may deadlock on PostgreSQL,
  // which then fails one of them (Aborted): it is tried again.
  absl::StatusOr<std::vector<bool>> stored;
  for (int attempt = 0; attempt < kWriteAttempts; ++attempt) {
    stored = StoreCaptures(*db, captures, numbers);
    if (stored.ok() || stored.status().code() != absl::StatusCode::kAborted) break;
  }
  return stored;
}

// Two round trips on PostgreSQL however many captures: the captures' rows and their keyframes' reports,
// then everything else with the COMMIT.
absl::StatusOr<std::vector<bool>> SqlStore::StoreCaptures(SqlConnection& db, const std::vector<ValidCapture>& captures,
                                                          const NameNumbers& names) {
  std::vector<NewCapture> batch(captures.size());
  MEMFLEET_ASSIGN_OR_RETURN(SqlTransaction txn, SqlTransaction::Begin(db));
  for (size_t i = 0; i < captures.size(); ++i) {
    const CaptureRecord& c = *captures[i].record;
    NewCapture& n = batch[i];
    n.record = &c;
    n.times = captures[i].times;
    MEMFLEET_RETURN_IF_ERROR(
        db.Send(kInsertCaptureSql,
                {SqlValue::Text(c.capture_id), SqlValue::Text(c.device_id), SqlValue::Text(n.times.captured_at),
                 SqlValue::Text(n.times.received_at), SqlValue::Text(c.sweep_id), SqlValue::Text(c.raw_codec),
                 SqlValue::Int(static_cast<int64_t>(c.raw_bytes)), SqlValue::Blob(c.raw_blob),
                 SqlValue::TextOrNull(c.build_fingerprint), SqlValue::TextOrNull(c.raw_base)},
                SqlRowFn(), &n.inserted));
    if (!c.raw_base.empty()) {
      MEMFLEET_RETURN_IF_ERROR(db.Send(kKeyframeReportSql, {SqlValue::Text(c.raw_base)},
                                       [&n](const SqlRow& row) { n.base_zstd = row.ColumnBlob(0); }));
    }
  }
  MEMFLEET_RETURN_IF_ERROR(db.Flush());

  // Keyframes of this batch, by capture id: a delta stored beside its keyframe is stored against its report.
  std::map<std::string, const std::string*> batch_keyframes;
  std::map<std::string, std::string> seen_at;  // device -> the latest time a capture of it was received
  std::vector<bool> inserted;
  inserted.reserve(batch.size());
  for (NewCapture& n : batch) {
    inserted.push_back(n.inserted != 0);
    const CaptureRecord& c = *n.record;
    if (n.inserted == 0) {
      // The same id stored for another device is AlreadyExists, never a duplicate: a duplicate is acked
      // and the agent deletes its copy, so one device's id must not stand for another device's capture.
      MEMFLEET_ASSIGN_OR_RETURN(std::optional<std::string> owner,
                                QueryFirst(db, kCaptureDeviceSql, {SqlValue::Text(c.capture_id)}, ReadFirstText));
      if (owner.has_value() && *owner != c.device_id) return OtherDevicesCapture(c, *owner);
      continue;
    }
    std::optional<std::string> base_json;
    if (!c.raw_base.empty()) {
      if (auto k = batch_keyframes.find(c.raw_base); k != batch_keyframes.end()) base_json = *k->second;
    }
    std::pair<std::string, bool> frame;
    if (base_json.has_value()) {
      frame = {CompressReportJsonAgainst(c.report_json, *base_json), true};
    } else {
      frame = EncodeAgainst(c.report_json, n.base_zstd);
    }
    if (c.raw_base.empty()) batch_keyframes[c.capture_id] = &c.report_json;
    MEMFLEET_ASSIGN_OR_RETURN(std::string block, ProcessBlockOf(c.report, names));
    SqlParams report =
        DeviceReportParams(c.capture_id, c.device_id, n.times.captured_at, c.report, std::move(block), c.stored_tier);
    SqlValue frame_bytes = SqlValue::Blob(frame.first);
    SqlValue base = frame.second ? SqlValue::Text(c.raw_base) : SqlValue::Null();
    if (!sql_->insert_report_and_frame.empty()) {
      report.push_back(std::move(frame_bytes));
      report.push_back(std::move(base));
      MEMFLEET_RETURN_IF_ERROR(db.Send(sql_->insert_report_and_frame, std::move(report)));
    } else {
      MEMFLEET_RETURN_IF_ERROR(db.Send(sql_->insert_device_report, std::move(report)));
      MEMFLEET_RETURN_IF_ERROR(
          db.Send(kInsertReportBlobSql, {SqlValue::Text(c.capture_id), std::move(frame_bytes), std::move(base)}));
    }
    for (const StoredLabel& label : StoredLabelsOf(c.labels)) {
      MEMFLEET_RETURN_IF_ERROR(db.Send(kInsertLabelSql, {SqlValue::Text(c.capture_id), SqlValue::Text(label.key),
                                                         SqlValue::Text(label.value), SqlValue::Text(label.source)}));
    }
    std::string& seen = seen_at[c.device_id];
    seen = std::max(seen, n.times.received_at.empty() ? n.times.captured_at : n.times.received_at);
  }
  if (std::find(inserted.begin(), inserted.end(), true) == inserted.end()) {
    txn.Rollback();  // nothing was written; a duplicate is not an error
    return inserted;
  }
  // Devices last, in id order: a device row is locked once its capture rows are written, never before
  // another device's, so concurrent batches do not lock devices in opposite orders.
  for (const auto& [device_id, at] : seen_at) {
    MEMFLEET_RETURN_IF_ERROR(db.Send(sql_->touch_device, {SqlValue::Text(device_id), SqlValue::Text(at)}));
  }
  MEMFLEET_RETURN_IF_ERROR(txn.Commit());
  return inserted;
}

namespace {

// A dependant's report: its capture_no, and its JSON as decompressed against its base's old report.
struct DependantReport {
  int64_t capture_no = 0;
  std::string json;
};

// The reports stored against capture_no's report, decompressed before that report is replaced. A
// dependant that does not decompress fails the replacement (DataLoss naming it): re-encoding it against
// the new base would turn an unreadable report into a wrong one.
absl::StatusOr<std::vector<DependantReport>> ReadDependantReports(SqlConnection& db, const std::string& capture_id,
                                                                  int64_t capture_no) {
  std::vector<int64_t> numbers;
  MEMFLEET_ASSIGN_OR_RETURN(std::vector<CompressedReport> rows,
                            QueryAll(db, kReportDependantsSql, {SqlValue::Text(capture_id), SqlValue::Int(capture_no)},
                                     [&numbers](const SqlRow& row) {
                                       numbers.push_back(row.ColumnInt64(0));
                                       CompressedReport r;
                                       r.report.capture_id = row.ColumnText(1);
                                       r.report_zstd = row.ColumnBlob(2);
                                       r.against_base = true;
                                       return r;
                                     }));
  if (rows.empty()) return std::vector<DependantReport>();
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<std::string> base_zstd,
                            QueryFirst(db, kOwnReportBlobSql, {SqlValue::Int(capture_no)},
                                       [](const SqlRow& row) { return row.ColumnBlob(0); }));
  std::vector<DependantReport> dependants;
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].base_zstd = base_zstd;
    MEMFLEET_ASSIGN_OR_RETURN(StoredReport report, DecodeReport(std::move(rows[i])));
    dependants.push_back({numbers[i], std::move(report.report_json)});
  }
  return dependants;
}

}  // namespace

absl::Status SqlStore::ReplaceReport(const std::string& capture_id, const report::Report& report,
                                     const std::string& report_json) {
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(capture_id, "capture_id"));
  SqlConnectionPool::Lease db = writers_->Acquire();
  MEMFLEET_ASSIGN_OR_RETURN(NameNumbers names, ProcessNameNumbers(*db, ProcessNamesOf(report)));
  MEMFLEET_ASSIGN_OR_RETURN(std::string block, ProcessBlockOf(report, names));
  MEMFLEET_ASSIGN_OR_RETURN(SqlTransaction txn, SqlTransaction::Begin(*db));
  MEMFLEET_ASSIGN_OR_RETURN(
      auto identity, QueryFirst(*db, sql_->capture_for_replace, {SqlValue::Text(capture_id)}, [](const SqlRow& row) {
        return std::make_pair(row.ColumnText(0), row.ColumnText(1));
      }));
  if (!identity.has_value()) {
    return absl::NotFoundError(absl::StrCat("no stored capture \"", capture_id, "\" to replace the report of"));
  }
  // The capture's own identity wins over whatever the new report says.
  const auto& [device_id, captured_at] = *identity;
  std::vector<DependantReport> dependants;
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<int64_t> old_no,
                            QueryFirst(*db, kCaptureNoSql, {SqlValue::Text(capture_id)},
                                       [](const SqlRow& row) { return row.ColumnInt64(0); }));
  if (old_no.has_value()) {
    MEMFLEET_ASSIGN_OR_RETURN(dependants, ReadDependantReports(*db, capture_id, *old_no));
  }
  MEMFLEET_ASSIGN_OR_RETURN(
      auto base, QueryFirst(*db, kReportBaseSql, {SqlValue::Text(capture_id)},
                            [](const SqlRow& row) { return std::make_pair(row.ColumnInt64(0), row.ColumnBlob(1)); }));
  const std::pair<std::string, bool> frame =
      EncodeAgainst(report_json, base.has_value() ? std::optional<std::string>(base->second) : std::nullopt);
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<int64_t> capture_no,
                            QueryFirst(*db, sql_->upsert_device_report,
                                       DeviceReportParams(capture_id, device_id, captured_at, report, std::move(block)),
                                       [](const SqlRow& row) { return row.ColumnInt64(0); }));
  if (!capture_no.has_value()) return absl::InternalError("storing a report returned no capture_no");
  MEMFLEET_RETURN_IF_ERROR(db->Send(kPutReportBlobSql, {SqlValue::Int(*capture_no), SqlValue::Blob(frame.first),
                                                        frame.second ? SqlValue::Int(base->first) : SqlValue::Null()}));
  for (const DependantReport& d : dependants) {
    MEMFLEET_RETURN_IF_ERROR(
        db->Send(kRewriteReportBlobSql,
                 {SqlValue::Int(d.capture_no), SqlValue::Blob(CompressReportJsonAgainst(d.json, report_json))}));
  }
  MEMFLEET_RETURN_IF_ERROR(db->Send(sql_->refresh_from_latest_report, {SqlValue::Text(device_id)}));
  return txn.Commit();
}

// ---- raw captures ----

absl::StatusOr<bool> SqlStore::HasCapture(const std::string& capture_id) {
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<std::string> owner, CaptureDevice(capture_id));
  return owner.has_value();
}

absl::StatusOr<std::optional<std::string>> SqlStore::CaptureDevice(const std::string& capture_id) {
  SqlConnectionPool::Lease db = readers_->Acquire();
  return QueryFirst(*db, kCaptureDeviceSql, {SqlValue::Text(capture_id)}, ReadFirstText);
}

absl::Status SqlStore::ForEachRawCapture(const std::string& device_id,
                                         const std::function<void(const RawCapture&)>& fn) {
  // Ids first, then one capture at a time with no connection held during `fn`: it may call ReplaceReport,
  // and only one raw blob is in memory at once.
  std::vector<std::string> ids;
  {
    SqlConnectionPool::Lease db = readers_->Acquire();
    MEMFLEET_ASSIGN_OR_RETURN(
        ids, device_id.empty() ? QueryAll(*db, kRawCaptureIdsAllSql, {}, ReadFirstText)
                               : QueryAll(*db, kRawCaptureIdsOfDeviceSql, {SqlValue::Text(device_id)}, ReadFirstText));
  }
  for (const std::string& id : ids) {
    MEMFLEET_ASSIGN_OR_RETURN(std::optional<RawCapture> raw, GetRawCapture(id));
    if (raw.has_value()) fn(*raw);  // else deleted since the listing
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<CaptureStore::RawCapture>> SqlStore::GetRawCapture(const std::string& capture_id) {
  SqlConnectionPool::Lease db = readers_->Acquire();
  return QueryFirst(*db, kRawCaptureSql, {SqlValue::Text(capture_id)}, ReadRawCapture<SqlRow>);
}

absl::StatusOr<Store::Stats> SqlStore::GetStats() {
  SqlConnectionPool::Lease db = readers_->Acquire();
  // Aggregates without GROUP BY always return their one row.
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<Stats> stats, QueryFirst(*db, kCaptureStatsSql, {}, [](const SqlRow& row) {
                              Stats s;
                              s.captures = NonNegative(row.ColumnInt64(0));
                              s.raw_blob_bytes = NonNegative(row.ColumnInt64(1));
                              s.raw_bytes = NonNegative(row.ColumnInt64(2));
                              return s;
                            }));
  MEMFLEET_ASSIGN_OR_RETURN(
      std::optional<uint64_t> process_rows,
      QueryFirst(*db, kProcessRowCountSql, {}, [](const SqlRow& row) { return NonNegative(row.ColumnInt64(0)); }));
  if (!stats.has_value() || !process_rows.has_value()) return absl::InternalError("a COUNT(*) returned no row");
  stats->process_rows = *process_rows;
  return *stats;
}

}  // namespace memfleet::storage
