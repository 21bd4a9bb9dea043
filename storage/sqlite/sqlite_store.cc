#include "storage/sqlite/sqlite_store.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/status_macros.h"
#include "report/report.h"
#include "storage/history_order.h"
#include "storage/report_codec.h"
#include "storage/sqlite/schema.h"
#include "storage/sqlite/sqlite_db.h"
#include "storage/store_rows.h"
#include "storage/timestamp.h"

namespace memfleet::storage {
namespace sqlite_store_internal {

// One SQLite connection, its statement cache and the mutex that serializes their use.
struct Connection {
  absl::Mutex mu;
  SqliteDb db ABSL_GUARDED_BY(mu);
  // Keyed by SQL text; destroyed before `db` (declared after it).
  std::map<std::string, std::unique_ptr<Statement>, std::less<>> statements ABSL_GUARDED_BY(mu);

  // The cached, reset statement for `sql`, prepared on first use.
  absl::StatusOr<Statement*> Get(std::string_view sql) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    auto it = statements.find(sql);
    if (it != statements.end()) {
      it->second->Reset();
      return it->second.get();
    }
    absl::StatusOr<Statement> st = db.Prepare(sql);
    if (!st.ok()) return st.status();
    auto inserted = statements.emplace(std::string(sql), std::make_unique<Statement>(*std::move(st)));
    return inserted.first->second.get();
  }
};

}  // namespace sqlite_store_internal

namespace {

using sqlite_store_internal::Connection;

// Resets a cached statement at the end of a scope: a statement left mid-result would keep its read
// transaction open and pin an old WAL snapshot.
class ResetOnExit {
 public:
  explicit ResetOnExit(Statement* st) : st_(st) {}
  ResetOnExit(const ResetOnExit&) = delete;
  ResetOnExit& operator=(const ResetOnExit&) = delete;
  ~ResetOnExit() { st_->Reset(); }

 private:
  Statement* st_;
};

// Every row `st` returns, each read by `read(const Statement&)`.
template <typename Read>
auto ReadAllRows(Statement* st, const Read& read) -> absl::StatusOr<std::vector<decltype(read(*st))>> {
  std::vector<decltype(read(*st))> rows;
  while (true) {
    MEMFLEET_ASSIGN_OR_RETURN(StepResult r, st->Step());
    if (r == StepResult::kDone) return rows;
    rows.push_back(read(*st));
  }
}

// The first row `st` returns, read by `read(const Statement&)`; nullopt when it returns none.
template <typename Read>
auto ReadFirstRow(Statement* st, const Read& read) -> absl::StatusOr<std::optional<decltype(read(*st))>> {
  using Row = decltype(read(*st));
  MEMFLEET_ASSIGN_OR_RETURN(StepResult r, st->Step());
  if (r == StepResult::kDone) return std::optional<Row>();
  return std::optional<Row>(read(*st));
}

// `sql` on `c` (cached), with the text parameters ?1, ?2, ... bound in order, then `rows(st)` (ReadAllRows
// or ReadFirstRow with a reader); the statement is reset afterwards.
template <typename Rows>
auto QueryWithText(Connection& c, std::string_view sql, std::initializer_list<std::string_view> params,
                   const Rows& rows) -> decltype(rows(static_cast<Statement*>(nullptr))) {
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(sql));
  ResetOnExit reset(st);
  int index = 1;
  for (std::string_view param : params) MEMFLEET_RETURN_IF_ERROR(st->BindText(index++, param));
  return rows(st);
}

// QueryWithText's usual forms: every row, or the first one.
template <typename Read>
auto QueryAll(Connection& c, std::string_view sql, std::initializer_list<std::string_view> params,
              const Read& read) ABSL_LOCKS_EXCLUDED(c.mu) {
  return QueryWithText(c, sql, params, [&read](Statement* st) { return ReadAllRows(st, read); });
}

template <typename Read>
auto QueryFirst(Connection& c, std::string_view sql, std::initializer_list<std::string_view> params,
                const Read& read) ABSL_LOCKS_EXCLUDED(c.mu) {
  return QueryWithText(c, sql, params, [&read](Statement* st) { return ReadFirstRow(st, read); });
}

std::string ReadFirstText(const Statement& st) { return st.ColumnText(0); }

// ---- SQL ----

// UpsertDevice overwrites the identity fields; an empty platform or last_seen_at keeps the stored one,
// last_seen_at never moves backwards (canonical times compare as strings), dropped_captures adds up, and
// clock_skew_s is the latest Hello's (NULL: it carried no time).
constexpr char kUpsertDeviceSql[] =
    "INSERT INTO devices (device_id, model, soc, build_fingerprint, kernel, agent_version, page_size, platform, "
    "last_seen_at, dropped_captures, clock_skew_s, manufacturer, build_type, abi, android_sdk, access, selinux) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17) "
    "ON CONFLICT (device_id) DO UPDATE SET model = excluded.model, soc = excluded.soc, "
    "build_fingerprint = excluded.build_fingerprint, kernel = excluded.kernel, "
    "agent_version = excluded.agent_version, page_size = excluded.page_size, "
    "platform = CASE WHEN excluded.platform = '' THEN devices.platform ELSE excluded.platform END, "
    "last_seen_at = MAX(devices.last_seen_at, excluded.last_seen_at), "
    "dropped_captures = devices.dropped_captures + excluded.dropped_captures, clock_skew_s = excluded.clock_skew_s, "
    "manufacturer = excluded.manufacturer, build_type = excluded.build_type, abi = excluded.abi, "
    "android_sdk = excluded.android_sdk, access = excluded.access, selinux = excluded.selinux, retired_at = ''";

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
constexpr char kPurgeDeviceProcessNamesSql[] =
    "DELETE FROM device_process_names WHERE device_no = (SELECT device_no FROM device_numbers WHERE device_id = ?1)";
constexpr char kPurgeDeviceNumberSql[] = "DELETE FROM device_numbers WHERE device_id = ?1";
constexpr char kPurgeRetentionMarksSql[] = "DELETE FROM device_retention WHERE device_id = ?1";

// A capture of a device the server never registered still gets a devices row, so the device-driven
// fleet queries see it.
constexpr char kTouchDeviceSql[] =
    "INSERT INTO devices (device_id, last_seen_at) VALUES (?1, ?2) "
    "ON CONFLICT (device_id) DO UPDATE SET last_seen_at = MAX(devices.last_seen_at, excluded.last_seen_at)";

// DeviceRecord.platform is the platform of the device's latest report.
constexpr char kRefreshPlatformSql[] =
    "UPDATE devices SET platform = COALESCE((SELECT r.platform FROM device_reports AS r WHERE r.device_id = ?1 "
    "ORDER BY r.captured_at DESC, r.capture_id DESC LIMIT 1), platform) WHERE device_id = ?1";

// ON CONFLICT (capture_id) DO NOTHING, not INSERT OR IGNORE: OR IGNORE would also swallow NOT NULL
// violations and report them as duplicates.
constexpr char kInsertCaptureSql[] =
    "INSERT INTO captures (capture_id, device_id, captured_at, received_at, sweep_id, raw_codec, raw_bytes, "
    "report_json, raw_blob, build_fingerprint, raw_base) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) "
    "ON CONFLICT (capture_id) DO NOTHING";

// An upsert, so that a replaced report keeps its capture_no (the process rows' tie order at one millisecond
// stays the storage order, re-accounting or not).
constexpr char kInsertDeviceReportSql[] =
    "INSERT INTO device_reports (capture_id, device_id, captured_at, platform, ddr_kb, ddr_estimated, "
    "mem_total_kb, gcma_kb, static_reserved_kb, kernel_cma_kb, kernel_kb, processes_kb, total_kb) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) ON CONFLICT (capture_id) DO UPDATE SET "
    "device_id = excluded.device_id, captured_at = excluded.captured_at, platform = excluded.platform, "
    "ddr_kb = excluded.ddr_kb, ddr_estimated = excluded.ddr_estimated, mem_total_kb = excluded.mem_total_kb, "
    "gcma_kb = excluded.gcma_kb, static_reserved_kb = excluded.static_reserved_kb, "
    "kernel_cma_kb = excluded.kernel_cma_kb, kernel_kb = excluded.kernel_kb, processes_kb = excluded.processes_kb, "
    "total_kb = excluded.total_kb RETURNING capture_no";

constexpr char kPutReportBlobSql[] =
    "INSERT INTO report_blobs (capture_no, report_zstd, base_no) VALUES (?1, ?2, ?3) "
    "ON CONFLICT (capture_no) DO UPDATE SET report_zstd = excluded.report_zstd, base_no = excluded.base_no";

// The report a capture's report is stored against (schema version 16): its keyframe's, itself a frame of
// its own. None for a keyframe, or when the keyframe has no report.
constexpr char kReportBaseSql[] =
    "SELECT kb.capture_no, kb.report_zstd FROM captures AS c JOIN device_reports AS kr ON kr.capture_id = c.raw_base "
    "JOIN report_blobs AS kb ON kb.capture_no = kr.capture_no WHERE c.capture_id = ?1 AND kb.base_no IS NULL";
// The reports stored against capture ?1's (capture_no ?2): its deltas', found through captures_by_raw_base.
constexpr char kReportDependantsSql[] =
    "SELECT b.capture_no, c.capture_id, b.report_zstd FROM captures AS c JOIN device_reports AS r ON "
    "r.capture_id = c.capture_id JOIN report_blobs AS b ON b.capture_no = r.capture_no "
    "WHERE c.raw_base = ?1 AND b.base_no = ?2";
constexpr char kOwnReportBlobSql[] = "SELECT report_zstd FROM report_blobs WHERE capture_no = ?1 AND base_no IS NULL";
constexpr char kRewriteReportBlobSql[] = "UPDATE report_blobs SET report_zstd = ?2 WHERE capture_no = ?1";

// A canonical time (timestamp.h) as Unix milliseconds, the key of process_samples (schema version 15; the
// migration converts with the same expression). `param` is a bound parameter such as "?3". The minute goes
// through strftime and the seconds are added as a number: strftime has no leap second (":60" is NULL to
// it), which the canonical form keeps; here it counts as the next minute's first second.
std::string MillisecondsOf(const char* param) {
  return absl::StrCat("(CAST(strftime('%s', substr(", param, ", 1, 16)) AS INTEGER) * 1000 + CAST(substr(", param,
                      ", 18, 2) AS INTEGER) * 1000 + CAST(substr(", param, ", 21, 3) AS INTEGER))");
}

constexpr char kAddDeviceNumberSql[] =
    "INSERT INTO device_numbers (device_id) VALUES (?1) ON CONFLICT (device_id) DO NOTHING";
constexpr char kAddProcessNameSql[] = "INSERT INTO process_names (name) VALUES (?1) ON CONFLICT (name) DO NOTHING";
// The names a device ever had (schema version 16), which a capture's process rows are deleted over.
constexpr char kAddDeviceProcessNameSql[] =
    "INSERT INTO device_process_names (device_no, name_no) VALUES ((SELECT device_no FROM device_numbers WHERE "
    "device_id = ?1), (SELECT name_no FROM process_names WHERE name = ?2)) ON CONFLICT DO NOTHING";

// ?1 device id, ?2 process name, ?3 captured_at, ?4 pid, ?5 capture_no, ?6-?14 the figures.
std::string InsertProcessSampleSql() {
  return absl::StrCat(
      "INSERT INTO process_samples (device_no, name_no, captured_ms, pid, capture_no, total_kb, pss_kb, swap_pss_kb, "
      "gfxdev_kb, gl_kb, dma_kb, native_graphics_kb, non_graphics_kb, graphics_dma_kb) VALUES ("
      "(SELECT device_no FROM device_numbers WHERE device_id = ?1), (SELECT name_no FROM process_names WHERE name = ?2), ",
      MillisecondsOf("?3"), ", ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)");
}

constexpr char kCaptureDeviceSql[] = "SELECT device_id FROM captures WHERE capture_id = ?1";

constexpr char kCaptureForReplaceSql[] = "SELECT device_id, captured_at FROM captures WHERE capture_id = ?1";
// A capture's process rows (schema version 16: no index by capture, no cascade): one probe of the primary
// key per name its device ever had, at the capture's time, keeping the capture's own rows only (another
// capture of the device may share the millisecond).
std::string DeleteProcessSamplesSql() {
  return absl::StrCat(
      "DELETE FROM process_samples WHERE (device_no, name_no, captured_ms) IN (SELECT n.device_no, n.name_no, ",
      MillisecondsOf("r.captured_at"),
      " FROM device_reports AS r JOIN device_numbers AS d ON d.device_id = r.device_id "
      "JOIN device_process_names AS n ON n.device_no = d.device_no WHERE r.capture_id = ?1) "
      "AND capture_no = (SELECT capture_no FROM device_reports WHERE capture_id = ?1)");
}

// A report is the compressed JSON in report_blobs (schema version 15; device_reports until 14), one
// rowid probe from the capture's device_reports row; from version 16 also its base's frame when it is
// stored against one (a rowid probe more). The columns ReadStoredReport reads, `build` the fifth.
std::string ReportColumnsOfR(const char* build) {
  return absl::StrCat(
      "c.capture_id, c.device_id, c.captured_at, (SELECT b.report_zstd FROM report_blobs AS b WHERE b.capture_no = "
      "r.capture_no), ", build, ", (SELECT b.base_no FROM report_blobs AS b WHERE b.capture_no = r.capture_no), "
      "(SELECT k.report_zstd FROM report_blobs AS b JOIN report_blobs AS k ON k.capture_no = b.base_no "
      "WHERE b.capture_no = r.capture_no)");
}

std::string ReportAtSql() {
  return absl::StrCat(
      "SELECT ", ReportColumnsOfR("NULL"), " FROM captures AS c "
    "JOIN device_reports AS r ON r.capture_id = c.capture_id "
    "WHERE c.device_id = ?1 AND c.captured_at <= ?2 ORDER BY c.captured_at DESC, c.capture_id DESC LIMIT 1");
}
std::string ReportLatestSql() {
  return absl::StrCat(
      "SELECT ", ReportColumnsOfR("NULL"), " FROM captures AS c "
    "JOIN device_reports AS r ON r.capture_id = c.capture_id "
    "WHERE c.device_id = ?1 ORDER BY c.captured_at DESC, c.capture_id DESC LIMIT 1");
}
std::string ReportByCaptureSql() {
  return absl::StrCat(
      "SELECT ", ReportColumnsOfR("NULL"), " FROM captures AS c "
    "JOIN device_reports AS r ON r.capture_id = c.capture_id WHERE c.capture_id = ?1");
}

std::string ListDevicesSql() {
  return absl::StrCat(
      "SELECT ", kDeviceColumnsOfD,
      ", (SELECT COUNT(*) FROM captures AS c WHERE c.device_id = d.device_id)"
      ", (SELECT MAX(c.captured_at) FROM captures AS c WHERE c.device_id = d.device_id)"
      ", (SELECT r.total_kb FROM device_reports AS r WHERE r.device_id = d.device_id"
      " ORDER BY r.captured_at DESC, r.capture_id DESC LIMIT 1)"
      " FROM devices AS d ORDER BY d.device_id");
}

std::string GetDeviceSql() { return absl::StrCat("SELECT ", kDeviceColumnsOfD, " FROM devices AS d WHERE d.device_id = ?1"); }

// One range of process_samples' primary key, already in (captured_ms, pid) order; each point's capture id
// and time come from its device_reports row, one rowid probe. `since` "" is before every time. LIMIT -1
// is SQLite's "no limit". Newest first, so that a limit keeps the newest points: the range is walked
// backwards, and the caller turns the rows into time order (OldestFirst).
std::string ProcessTrendSql(const char* column) {
  return absl::StrCat("SELECT r.capture_id, r.captured_at, p.pid, p.", column,
                      " FROM process_samples AS p JOIN device_reports AS r ON r.capture_no = p.capture_no"
                      " WHERE p.device_no = (SELECT device_no FROM device_numbers WHERE device_id = ?1)"
                      " AND p.name_no = (SELECT name_no FROM process_names WHERE name = ?2)"
                      " AND p.captured_ms >= (CASE WHEN ?3 = '' THEN -9223372036854775807 ELSE ",
                      MillisecondsOf("?3"), " END) ORDER BY p.captured_ms DESC, p.pid DESC, p.capture_no DESC LIMIT ?4");
}

// Several processes of one name in one capture (a service and its short-lived twin, a restart caught
// mid-way) count together, as the baseline check counts them: their figures summed, unknown (NULL) when
// one of them is; no process of the name, NULL (docs/accounting.md, "One name, several pids").
std::string SummedOverPids(const char* column) {
  return absl::StrCat("CASE WHEN COUNT(*) = COUNT(p.", column, ") THEN SUM(p.", column, ") END");
}

// The process named ?N of the capture whose device_reports row is `r` (its pids summed): one range of
// process_samples' primary key (device, name, the capture's time); the capture_no keeps another capture
// at the same millisecond out.
std::string ProcessOfCaptureSql(const char* column, const char* name_param) {
  return absl::StrCat("SELECT ", SummedOverPids(column), " FROM process_samples AS p WHERE p.device_no = (SELECT device_no FROM "
                      "device_numbers WHERE device_id = r.device_id) AND p.name_no = (SELECT name_no FROM "
                      "process_names WHERE name = ", name_param, ") AND p.captured_ms = ", MillisecondsOf("r.captured_at"),
                      " AND p.capture_no = r.capture_no");
}

// A device's range of device_reports_by_device_time, newest first (as ProcessTrendSql).
std::string DeviceTrendSql(const char* column) {
  return absl::StrCat("SELECT capture_id, captured_at, 0, ", column,
                      " FROM device_reports WHERE device_id = ?1 AND captured_at >= ?2"
                      " ORDER BY captured_at DESC, capture_id DESC LIMIT ?3");
}

// Per device, the latest report is the last entry of its range in device_reports_by_device_time (a
// correlated LIMIT 1 subquery: one index probe per device, not a scan of every report), joined back by
// primary key. Ties on captured_at go to the greater capture_id, as in GetReport.
constexpr char kLatestReportJoin[] =
    " FROM devices AS d JOIN device_reports AS r ON r.capture_id = ("
    "SELECT latest.capture_id FROM device_reports AS latest WHERE latest.device_id = d.device_id"
    " ORDER BY latest.captured_at DESC, latest.capture_id DESC LIMIT 1)"
    " ORDER BY d.device_id";

std::string LatestDeviceFigureSql(const char* column) {
  return absl::StrCat("SELECT ", kDeviceColumnsOfD, ", r.capture_id, r.captured_at, r.", column, kLatestReportJoin);
}

// A process figure of the latest report; several processes of that name -> summed (SummedOverPids); the
// process absent from the latest report -> NULL. The latest report's time is the
// last of the device's range for that name when the process is in it (no later capture exists), so the
// range's end stands in for converting r.captured_at (ProcessOfCaptureSql), which costs more than both
// probes; the capture_no says whether that last time is the latest report's.
std::string LatestProcessFigureSql(const char* column) {
  return absl::StrCat(
      "SELECT ", kDeviceColumnsOfD, ", r.capture_id, r.captured_at, (SELECT ", SummedOverPids(column),
      " FROM process_samples AS p WHERE p.device_no = (SELECT device_no FROM device_numbers WHERE device_id = "
      "r.device_id) AND p.name_no = (SELECT name_no FROM process_names WHERE name = ?1) AND p.captured_ms = "
      "(SELECT MAX(m.captured_ms) FROM process_samples AS m WHERE m.device_no = (SELECT device_no FROM "
      "device_numbers WHERE device_id = r.device_id) AND m.name_no = (SELECT name_no FROM process_names WHERE "
      "name = ?1)) AND p.capture_no = r.capture_no)",
      kLatestReportJoin);
}

constexpr char kRawCaptureIdsAllSql[] = "SELECT capture_id FROM captures ORDER BY captured_at, capture_id";
constexpr char kRawCaptureIdsOfDeviceSql[] =
    "SELECT capture_id FROM captures WHERE device_id = ?1 ORDER BY captured_at, capture_id";
constexpr char kRawCaptureSql[] =
    "SELECT capture_id, device_id, captured_at, raw_codec, raw_blob, raw_base FROM captures WHERE capture_id = ?1";

constexpr char kUpsertSweepSql[] =
    "INSERT INTO sweeps (sweep_id, started_at, selector, finished_at) VALUES (?1, ?2, ?3, ?4) "
    "ON CONFLICT (sweep_id) DO UPDATE SET started_at = excluded.started_at, selector = excluded.selector, "
    "finished_at = excluded.finished_at";
constexpr char kDeleteSweepDevicesSql[] = "DELETE FROM sweep_devices WHERE sweep_id = ?1";
constexpr char kInsertSweepDeviceSql[] = "INSERT INTO sweep_devices (sweep_id, device_id, state) VALUES (?1, ?2, ?3)";
constexpr char kGetSweepSql[] = "SELECT sweep_id, started_at, selector, finished_at FROM sweeps WHERE sweep_id = ?1";
constexpr char kGetSweepDevicesSql[] = "SELECT device_id, state FROM sweep_devices WHERE sweep_id = ?1";
constexpr char kUnfinishedSweepIdsSql[] = "SELECT sweep_id FROM sweeps WHERE finished_at = '' ORDER BY sweep_id";

// length() of a blob reads only the record header, not the blob's overflow pages.
constexpr char kCaptureStatsSql[] =
    "SELECT COUNT(*), COALESCE(SUM(length(raw_blob)), 0), COALESCE(SUM(raw_bytes), 0) FROM captures";
constexpr char kProcessRowCountSql[] = "SELECT COUNT(*) FROM process_samples";

// ---- writes shared by PutCapture and ReplaceReport (caller holds the writer's mutex, in a transaction) ----

// Gives `key` its number in device_numbers or process_names (`sql`) if it has none yet.
absl::Status AddKey(Connection& c, const char* sql, const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(c.mu) {
  MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(sql));
  ResetOnExit reset(st);
  MEMFLEET_RETURN_IF_ERROR(st->BindText(1, key));
  return st->StepDone();
}

// A dependant's report: its capture_no, and its JSON as decompressed against its base's old report.
struct DependantReport {
  int64_t capture_no = 0;
  std::string json;
};

// The reports stored against capture_no's report, decompressed before that report is replaced. A
// dependant that does not decompress fails the replacement (DataLoss naming it): re-encoding it against
// the new base would turn an unreadable report into a wrong one.
absl::StatusOr<std::vector<DependantReport>> ReadDependantReports(Connection& c, const std::string& capture_id,
                                                                  int64_t capture_no) ABSL_EXCLUSIVE_LOCKS_REQUIRED(c.mu) {
  std::vector<CompressedReport> rows;
  std::vector<int64_t> numbers;
  {
    MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(kReportDependantsSql));
    ResetOnExit reset(st);
    MEMFLEET_RETURN_IF_ERROR(st->BindText(1, capture_id));
    MEMFLEET_RETURN_IF_ERROR(st->BindInt64(2, capture_no));
    while (true) {
      MEMFLEET_ASSIGN_OR_RETURN(StepResult r, st->Step());
      if (r != StepResult::kRow) break;
      numbers.push_back(st->ColumnInt64(0));
      CompressedReport row;
      row.report.capture_id = st->ColumnText(1);
      row.report_zstd = st->ColumnBlob(2);
      row.against_base = true;
      rows.push_back(std::move(row));
    }
  }
  if (rows.empty()) return std::vector<DependantReport>();
  std::optional<std::string> base_zstd;
  {
    MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(kOwnReportBlobSql));
    ResetOnExit reset(st);
    MEMFLEET_RETURN_IF_ERROR(st->BindInt64(1, capture_no));
    MEMFLEET_ASSIGN_OR_RETURN(base_zstd, ReadFirstRow(st, [](const Statement& row) { return row.ColumnBlob(0); }));
  }
  std::vector<DependantReport> dependants;
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].base_zstd = base_zstd;
    MEMFLEET_ASSIGN_OR_RETURN(StoredReport report, DecodeReport(std::move(rows[i])));
    dependants.push_back({numbers[i], std::move(report.report_json)});
  }
  return dependants;
}

// The frame to store `report_json` as, and the capture_no of the report it is compressed against (nullopt:
// the built-in dictionary). A keyframe whose report does not decompress is no base: the report is then
// stored as a frame of its own, readable without it.
absl::StatusOr<std::pair<std::string, std::optional<int64_t>>> EncodeReport(Connection& c, const std::string& capture_id,
                                                                            const std::string& report_json)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(c.mu) {
  MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(kReportBaseSql));
  ResetOnExit reset(st);
  MEMFLEET_RETURN_IF_ERROR(st->BindText(1, capture_id));
  MEMFLEET_ASSIGN_OR_RETURN(auto base, ReadFirstRow(st, [](const Statement& row) {
    return std::make_pair(row.ColumnInt64(0), row.ColumnBlob(1));
  }));
  if (base.has_value()) {
    absl::StatusOr<std::string> base_json = DecompressReportJson(base->second);
    if (base_json.ok()) {
      return std::make_pair(CompressReportJsonAgainst(report_json, *base_json), std::optional<int64_t>(base->first));
    }
  }
  return std::make_pair(CompressReportJson(report_json), std::optional<int64_t>());
}

absl::Status RewriteReportBlob(Connection& c, int64_t capture_no, const std::string& blob)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(c.mu) {
  MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(kRewriteReportBlobSql));
  ResetOnExit reset(st);
  MEMFLEET_RETURN_IF_ERROR(st->BindInt64(1, capture_no));
  MEMFLEET_RETURN_IF_ERROR(st->BindBlob(2, blob));
  return st->StepDone();
}

// Stores the capture's compressed report (schema version 16: against its keyframe's report when it has
// one), and re-encodes the reports stored against it, when it is a keyframe whose report is replaced.
absl::Status PutReportBlob(Connection& c, const std::string& capture_id, int64_t capture_no,
                           const std::string& report_json) ABSL_EXCLUSIVE_LOCKS_REQUIRED(c.mu) {
  MEMFLEET_ASSIGN_OR_RETURN(std::vector<DependantReport> dependants, ReadDependantReports(c, capture_id, capture_no));
  MEMFLEET_ASSIGN_OR_RETURN(auto encoded, EncodeReport(c, capture_id, report_json));
  {
    MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(kPutReportBlobSql));
    ResetOnExit reset(st);
    MEMFLEET_RETURN_IF_ERROR(st->BindInt64(1, capture_no));
    MEMFLEET_RETURN_IF_ERROR(st->BindBlob(2, encoded.first));
    MEMFLEET_RETURN_IF_ERROR(encoded.second.has_value() ? st->BindInt64(3, *encoded.second) : st->BindNull(3));
    MEMFLEET_RETURN_IF_ERROR(st->StepDone());
  }
  for (const DependantReport& d : dependants) {
    MEMFLEET_RETURN_IF_ERROR(RewriteReportBlob(c, d.capture_no, CompressReportJsonAgainst(d.json, report_json)));
  }
  return absl::OkStatus();
}

absl::Status InsertReportRows(Connection& c, const std::string& capture_id, const std::string& device_id,
                              const std::string& captured_at, const report::Report& report,
                              const std::string& report_json) ABSL_EXCLUSIVE_LOCKS_REQUIRED(c.mu) {
  int64_t capture_no = 0;
  {
    MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(kInsertDeviceReportSql));
    ResetOnExit reset(st);
    const report::DeviceReport& d = report.device;
    MEMFLEET_RETURN_IF_ERROR(st->BindText(1, capture_id));
    MEMFLEET_RETURN_IF_ERROR(st->BindText(2, device_id));
    MEMFLEET_RETURN_IF_ERROR(st->BindText(3, captured_at));
    MEMFLEET_RETURN_IF_ERROR(st->BindText(4, report::PlatformName(report.platform)));
    MEMFLEET_RETURN_IF_ERROR(st->BindOptionalInt64(5, d.ddr_kb));
    MEMFLEET_RETURN_IF_ERROR(st->BindInt64(6, d.ddr_estimated ? 1 : 0));
    MEMFLEET_RETURN_IF_ERROR(st->BindOptionalInt64(7, d.mem_total_kb));
    MEMFLEET_RETURN_IF_ERROR(st->BindOptionalInt64(8, d.gcma_kb));
    MEMFLEET_RETURN_IF_ERROR(st->BindOptionalInt64(9, d.static_reserved_kb));
    MEMFLEET_RETURN_IF_ERROR(st->BindOptionalInt64(10, d.kernel_cma_kb));
    MEMFLEET_RETURN_IF_ERROR(st->BindOptionalInt64(11, d.kernel_kb));
    MEMFLEET_RETURN_IF_ERROR(st->BindOptionalInt64(12, d.processes_kb));
    MEMFLEET_RETURN_IF_ERROR(st->BindOptionalInt64(13, d.total_kb));
    MEMFLEET_ASSIGN_OR_RETURN(StepResult returned, st->Step());
    if (returned != StepResult::kRow) return absl::InternalError("storing a report returned no capture_no");
    capture_no = st->ColumnInt64(0);
    // RETURNING's row comes before the statement completes: step to the end so it is written.
    MEMFLEET_RETURN_IF_ERROR(st->StepDone());
  }
  MEMFLEET_RETURN_IF_ERROR(PutReportBlob(c, capture_id, capture_no, report_json));
  MEMFLEET_RETURN_IF_ERROR(AddKey(c, kAddDeviceNumberSql, device_id));
  for (const auto& [pid, p] : report.processes) {
    MEMFLEET_RETURN_IF_ERROR(AddKey(c, kAddProcessNameSql, p.name));
    MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(kAddDeviceProcessNameSql));
    ResetOnExit reset(st);
    MEMFLEET_RETURN_IF_ERROR(st->BindText(1, device_id));
    MEMFLEET_RETURN_IF_ERROR(st->BindText(2, p.name));
    MEMFLEET_RETURN_IF_ERROR(st->StepDone());
  }
  MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(InsertProcessSampleSql()));
  ResetOnExit reset(st);
  for (const auto& [pid, p] : report.processes) {
    st->Reset();
    MEMFLEET_RETURN_IF_ERROR(st->BindText(1, device_id));
    MEMFLEET_RETURN_IF_ERROR(st->BindText(2, p.name));
    MEMFLEET_RETURN_IF_ERROR(st->BindText(3, captured_at));
    // The map key, not p.pid: it is what makes the (capture, pid) key unique.
    MEMFLEET_RETURN_IF_ERROR(st->BindInt64(4, pid));
    MEMFLEET_RETURN_IF_ERROR(st->BindInt64(5, capture_no));
    int index = 6;
    for (const std::optional<int64_t>* figure : {&p.total_kb, &p.pss_kb, &p.swap_pss_kb, &p.gfxdev_kb, &p.gl_kb,
                                                 &p.dma_kb, &p.native_graphics_kb, &p.non_graphics_kb,
                                                 &p.graphics_dma_kb}) {
      MEMFLEET_RETURN_IF_ERROR(st->BindOptionalInt64(index++, *figure));
    }
    MEMFLEET_RETURN_IF_ERROR(st->StepDone());
  }
  return absl::OkStatus();
}

absl::Status RunWithDeviceId(Connection& c, const char* sql, const std::string& device_id)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(c.mu) {
  MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(sql));
  ResetOnExit reset(st);
  MEMFLEET_RETURN_IF_ERROR(st->BindText(1, device_id));
  return st->StepDone();
}

absl::Status TouchDevice(Connection& c, const std::string& device_id, const std::string& seen_at)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(c.mu) {
  MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(kTouchDeviceSql));
  ResetOnExit reset(st);
  MEMFLEET_RETURN_IF_ERROR(st->BindText(1, device_id));
  MEMFLEET_RETURN_IF_ERROR(st->BindText(2, seen_at));
  return st->StepDone();
}

// The device a stored capture belongs to; nullopt when capture_id is not stored.
constexpr char kInsertLabelSql[] =
    "INSERT INTO capture_labels (capture_id, key, value, source) VALUES (?1, ?2, ?3, ?4)";
constexpr char kCaptureLabelsSql[] =
    "SELECT key, value, source FROM capture_labels WHERE capture_id = ?1 ORDER BY key";

// The captures carrying each of `count` labels from its source, bound as ?1/?2/?3 (key/value/source),
// ?4/?5/?6, ...: one index range of capture_labels_by_key_value per label.
std::string LabelledCapturesSql(size_t count) {
  std::string sql =
      "SELECT c.capture_id, c.device_id, c.captured_at, c.sweep_id, c.build_fingerprint FROM captures AS c WHERE ";
  for (size_t i = 0; i < count; ++i) {
    absl::StrAppend(&sql, i == 0 ? "" : " AND ", "c.capture_id IN (SELECT l.capture_id FROM capture_labels AS l",
                    " WHERE l.key = ?", 3 * i + 1, " AND l.value = ?", 3 * i + 2, " AND l.source = ?", 3 * i + 3, ")");
  }
  return absl::StrCat(sql, " ORDER BY c.device_id, c.captured_at DESC, c.capture_id DESC");
}

std::string CaptureDeviceFigureSql(const char* column) {
  return absl::StrCat("SELECT ", column, " FROM device_reports WHERE capture_id = ?1");
}

std::string CaptureProcessFigureSql(const char* column) {
  return absl::StrCat("SELECT (", ProcessOfCaptureSql(column, "?2"), ") FROM device_reports AS r WHERE r.capture_id = ?1");
}

absl::Status InsertLabels(Connection& c, const std::string& capture_id, const LabelSet& labels)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(c.mu) {
  for (const StoredLabel& label : StoredLabelsOf(labels)) {
    MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(kInsertLabelSql));
    ResetOnExit reset(st);
    MEMFLEET_RETURN_IF_ERROR(st->BindText(1, capture_id));
    MEMFLEET_RETURN_IF_ERROR(st->BindText(2, label.key));
    MEMFLEET_RETURN_IF_ERROR(st->BindText(3, label.value));
    MEMFLEET_RETURN_IF_ERROR(st->BindText(4, label.source));
    MEMFLEET_RETURN_IF_ERROR(st->StepDone());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<std::string>> StoredDeviceOf(Connection& c, const std::string& capture_id)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(c.mu) {
  MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(kCaptureDeviceSql));
  ResetOnExit reset(st);
  MEMFLEET_RETURN_IF_ERROR(st->BindText(1, capture_id));
  return ReadFirstRow(st, ReadFirstText);
}

// Inside the caller's transaction: false (and no write) when capture_id is already stored for the same
// device. The same id stored for another device is AlreadyExists, never a duplicate: a duplicate is acked
// and the agent deletes its copy, so one device's id must not stand for another device's capture.
absl::StatusOr<bool> InsertCapture(Connection& c, const CaptureRecord& capture, const CaptureTimes& times)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(c.mu) {
  {
    MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(kInsertCaptureSql));
    ResetOnExit reset(st);
    MEMFLEET_RETURN_IF_ERROR(st->BindText(1, capture.capture_id));
    MEMFLEET_RETURN_IF_ERROR(st->BindText(2, capture.device_id));
    MEMFLEET_RETURN_IF_ERROR(st->BindText(3, times.captured_at));
    MEMFLEET_RETURN_IF_ERROR(st->BindText(4, times.received_at));
    MEMFLEET_RETURN_IF_ERROR(st->BindText(5, capture.sweep_id));
    MEMFLEET_RETURN_IF_ERROR(st->BindText(6, capture.raw_codec));
    MEMFLEET_RETURN_IF_ERROR(st->BindInt64(7, static_cast<int64_t>(capture.raw_bytes)));
    MEMFLEET_RETURN_IF_ERROR(st->BindText(8, ""));  // the report is in device_reports (schema 14)
    MEMFLEET_RETURN_IF_ERROR(st->BindBlob(9, capture.raw_blob));
    MEMFLEET_RETURN_IF_ERROR(capture.build_fingerprint.empty() ? st->BindNull(10)
                                                               : st->BindText(10, capture.build_fingerprint));
    MEMFLEET_RETURN_IF_ERROR(capture.raw_base.empty() ? st->BindNull(11) : st->BindText(11, capture.raw_base));
    MEMFLEET_RETURN_IF_ERROR(st->StepDone());
  }
  if (c.db.Changes() == 0) {
    MEMFLEET_ASSIGN_OR_RETURN(std::optional<std::string> owner, StoredDeviceOf(c, capture.capture_id));
    if (owner.has_value() && *owner != capture.device_id) return OtherDevicesCapture(capture, *owner);
    return false;
  }
  MEMFLEET_RETURN_IF_ERROR(InsertReportRows(c, capture.capture_id, capture.device_id, times.captured_at, capture.report,
                                            capture.report_json));
  MEMFLEET_RETURN_IF_ERROR(InsertLabels(c, capture.capture_id, capture.labels));
  MEMFLEET_RETURN_IF_ERROR(
      TouchDevice(c, capture.device_id, times.received_at.empty() ? times.captured_at : times.received_at));
  MEMFLEET_RETURN_IF_ERROR(RunWithDeviceId(c, kRefreshPlatformSql, capture.device_id));
  return true;
}

absl::Status Configure(SqliteDb& db, const SqliteStoreOptions& options, bool writable, bool in_memory) {
  if (sqlite3_busy_timeout(db.handle(), options.busy_timeout_ms) != SQLITE_OK) {
    return absl::InternalError("cannot set the SQLite busy timeout");
  }
  MEMFLEET_RETURN_IF_ERROR(db.Exec("PRAGMA foreign_keys = ON"));
  if (writable && !in_memory) {
    // WAL lets the read connection query while a capture is being written. The pragma answers with the
    // mode it ended up in; a file system without shared memory stays in rollback mode, which is slower
    // for concurrent reads (they wait on busy_timeout) but still correct, so that is not an error.
    MEMFLEET_RETURN_IF_ERROR(db.Exec("PRAGMA journal_mode = WAL"));
    // FULL, not NORMAL: in WAL mode NORMAL may lose the last commits on power loss, and the server acks
    // a capture (the agent then deletes its spooled copy) as soon as PutCapture returns.
    MEMFLEET_RETURN_IF_ERROR(db.Exec("PRAGMA synchronous = FULL"));
  }
  if (options.max_page_count > 0) {
    // A PRAGMA takes no bound parameters; this is an integer from the options, not caller text.
    MEMFLEET_RETURN_IF_ERROR(db.Exec(absl::StrCat("PRAGMA max_page_count = ", options.max_page_count)));
  }
  return absl::OkStatus();
}

}  // namespace

// ---- opening ----

SqliteStore::SqliteStore(std::unique_ptr<Connection> writer, std::unique_ptr<Connection> reader)
    : writer_(std::move(writer)), reader_(std::move(reader)) {}

SqliteStore::~SqliteStore() = default;

SqliteStore::Connection& SqliteStore::reader() { return reader_ != nullptr ? *reader_ : *writer_; }

absl::StatusOr<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path,
                                                               const SqliteStoreOptions& options) {
  // SQLite would open "" as a private temporary database: never what a caller meant.
  if (path.empty()) return absl::InvalidArgumentError("database path is empty");
  const bool in_memory = path == ":memory:";
  auto writer = std::make_unique<Connection>();
  // Not shared yet; locked because the analysis cannot know that.
  absl::MutexLock writer_lock(&writer->mu);
  const int flags = options.read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  MEMFLEET_ASSIGN_OR_RETURN(writer->db, SqliteDb::Open(path, flags));
  // A read-write open of a file the process may not write (chmod 0444) silently falls back to read-only.
  const bool read_only = options.read_only || writer->db.IsReadOnly();
  MEMFLEET_RETURN_IF_ERROR(Configure(writer->db, options, !read_only, in_memory));
  if (read_only) {
    MEMFLEET_RETURN_IF_ERROR(CheckSchemaIsLatest(writer->db));
  } else {
    // Only takes effect on a new, empty file (an existing one converts at its first ReturnFreePages): then
    // retention's deletions can be given back to the file system a few pages at a time.
    MEMFLEET_RETURN_IF_ERROR(writer->db.Exec("PRAGMA auto_vacuum = INCREMENTAL"));
    MEMFLEET_RETURN_IF_ERROR(MigrateToLatest(writer->db));
  }
  std::unique_ptr<Connection> reader;
  if (!in_memory && !read_only) {
    reader = std::make_unique<Connection>();
    absl::MutexLock reader_lock(&reader->mu);
    MEMFLEET_ASSIGN_OR_RETURN(reader->db, SqliteDb::Open(path, SQLITE_OPEN_READONLY));
    MEMFLEET_RETURN_IF_ERROR(Configure(reader->db, options, /*writable=*/false, in_memory));
  }
  return std::unique_ptr<SqliteStore>(new SqliteStore(std::move(writer), std::move(reader)));
}

absl::StatusOr<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path) {
  return OpenSqliteStore(path, SqliteStoreOptions());
}

absl::StatusOr<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path,
                                                       const SqliteStoreOptions& options) {
  MEMFLEET_ASSIGN_OR_RETURN(std::unique_ptr<SqliteStore> store, SqliteStore::Open(path, options));
  return std::unique_ptr<Store>(std::move(store));
}

// ---- writes ----

absl::Status SqliteStore::UpsertDevice(const DeviceRecord& device) {
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(device.device_id, "device_id"));
  MEMFLEET_ASSIGN_OR_RETURN(std::string last_seen_at, NormalizeOptionalTimestamp(device.last_seen_at, "last_seen_at"));
  Connection& c = *writer_;
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(kUpsertDeviceSql));
  ResetOnExit reset(st);
  MEMFLEET_RETURN_IF_ERROR(st->BindText(1, device.device_id));
  MEMFLEET_RETURN_IF_ERROR(st->BindText(2, device.model));
  MEMFLEET_RETURN_IF_ERROR(st->BindText(3, device.soc));
  MEMFLEET_RETURN_IF_ERROR(st->BindText(4, device.build_fingerprint));
  MEMFLEET_RETURN_IF_ERROR(st->BindText(5, device.kernel));
  MEMFLEET_RETURN_IF_ERROR(st->BindText(6, device.agent_version));
  MEMFLEET_RETURN_IF_ERROR(st->BindInt64(7, device.page_size));
  MEMFLEET_RETURN_IF_ERROR(st->BindText(8, device.platform));
  MEMFLEET_RETURN_IF_ERROR(st->BindText(9, last_seen_at));
  MEMFLEET_RETURN_IF_ERROR(st->BindInt64(10, DroppedCapturesToStore(device.dropped_captures)));
  MEMFLEET_RETURN_IF_ERROR(st->BindOptionalInt64(11, device.clock_skew_s));
  int column = 12;
  for (const std::string* fact : {&device.manufacturer, &device.build_type, &device.abi, &device.android_sdk,
                                  &device.access, &device.selinux}) {
    MEMFLEET_RETURN_IF_ERROR(st->BindText(column++, *fact));
  }
  return st->StepDone();
}

absl::StatusOr<bool> SqliteStore::RetireDevice(const std::string& device_id, const std::string& retired_at) {
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(device_id, "device_id"));
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(retired_at, "retired_at"));
  MEMFLEET_ASSIGN_OR_RETURN(std::string at, NormalizeOptionalTimestamp(retired_at, "retired_at"));
  Connection& c = *writer_;
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(kRetireDeviceSql));
  ResetOnExit reset(st);
  MEMFLEET_RETURN_IF_ERROR(st->BindText(1, device_id));
  MEMFLEET_RETURN_IF_ERROR(st->BindText(2, at));
  MEMFLEET_RETURN_IF_ERROR(st->StepDone());
  return c.db.Changes() == 1;
}

absl::StatusOr<uint64_t> SqliteStore::PurgeDevice(const std::string& device_id) {
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(device_id, "device_id"));
  uint64_t deleted = 0;
  for (const std::string& batch_sql : {PurgeBatchSql(true), PurgeBatchSql(false)}) {
    while (true) {
      MEMFLEET_ASSIGN_OR_RETURN(std::vector<std::string> ids, QueryAll(*writer_, batch_sql, {device_id}, ReadFirstText));
      if (ids.empty()) break;
      // Retention's deletion: process rows, report, labels and raw blob of each, one transaction a batch.
      MEMFLEET_ASSIGN_OR_RETURN(size_t gone, DeleteCaptures(ids));
      if (gone == 0) return absl::InternalError(absl::StrCat("purging device ", device_id, " deleted nothing"));
      deleted += gone;
    }
  }
  MEMFLEET_ASSIGN_OR_RETURN(bool removed, RemoveDeviceRows(device_id));
  if (!removed) {
    MEMFLEET_ASSIGN_OR_RETURN(std::vector<std::string> left,
                              QueryAll(*writer_, PurgeBatchSql(false), {device_id}, ReadFirstText));
    if (!left.empty()) {
      return absl::FailedPreconditionError(absl::StrCat("captures of device ", device_id,
                                                        " arrived during the purge (its agent is back); ", deleted,
                                                        " were deleted and the device stays"));
    }
  }
  return deleted;
}

absl::StatusOr<bool> SqliteStore::RemoveDeviceRows(const std::string& device_id) {
  Connection& c = *writer_;
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c.db));
  MEMFLEET_RETURN_IF_ERROR(RunWithDeviceId(c, kPurgeDeviceRowSql, device_id));
  if (c.db.Changes() == 0) {
    txn.Rollback();
    return false;
  }
  for (const char* sql : {kPurgeDeviceProcessNamesSql, kPurgeDeviceNumberSql, kPurgeRetentionMarksSql}) {
    MEMFLEET_RETURN_IF_ERROR(RunWithDeviceId(c, sql, device_id));
  }
  MEMFLEET_RETURN_IF_ERROR(txn.Commit());
  return true;
}

absl::StatusOr<bool> SqliteStore::PutCapture(const CaptureRecord& capture) {
  MEMFLEET_ASSIGN_OR_RETURN(CaptureTimes times, ValidateCapture(capture));
  Connection& c = *writer_;
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c.db));
  MEMFLEET_ASSIGN_OR_RETURN(bool inserted, InsertCapture(c, capture, times));
  if (!inserted) {
    txn.Rollback();  // nothing was written; a duplicate is not an error
    return false;
  }
  MEMFLEET_RETURN_IF_ERROR(txn.Commit());
  return true;
}

absl::StatusOr<std::vector<bool>> SqliteStore::PutCaptures(const std::vector<CaptureRecord>& captures) {
  MEMFLEET_ASSIGN_OR_RETURN(std::vector<CaptureTimes> times, ValidateCaptures(captures));
  Connection& c = *writer_;
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c.db));
  std::vector<bool> inserted;
  inserted.reserve(captures.size());
  for (size_t i = 0; i < captures.size(); ++i) {
    MEMFLEET_ASSIGN_OR_RETURN(bool added, InsertCapture(c, captures[i], times[i]));
    inserted.push_back(added);
  }
  MEMFLEET_RETURN_IF_ERROR(txn.Commit());
  return inserted;
}

absl::Status SqliteStore::ReplaceReport(const std::string& capture_id, const report::Report& report,
                                        const std::string& report_json) {
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(capture_id, "capture_id"));
  Connection& c = *writer_;
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c.db));
  std::string device_id, captured_at;
  {
    MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(kCaptureForReplaceSql));
    ResetOnExit reset(st);
    MEMFLEET_RETURN_IF_ERROR(st->BindText(1, capture_id));
    MEMFLEET_ASSIGN_OR_RETURN(auto identity, ReadFirstRow(st, [](const Statement& row) {
      return std::make_pair(row.ColumnText(0), row.ColumnText(1));
    }));
    if (!identity.has_value()) {
      return absl::NotFoundError(absl::StrCat("no stored capture \"", capture_id, "\" to replace the report of"));
    }
    // The capture's own identity wins over whatever the new report says.
    std::tie(device_id, captured_at) = *std::move(identity);
  }
  {
    // The device_reports row is updated in place by InsertReportRows; its process rows are rewritten.
    MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(DeleteProcessSamplesSql()));
    ResetOnExit reset(st);
    MEMFLEET_RETURN_IF_ERROR(st->BindText(1, capture_id));
    MEMFLEET_RETURN_IF_ERROR(st->StepDone());
  }
  MEMFLEET_RETURN_IF_ERROR(InsertReportRows(c, capture_id, device_id, captured_at, report, report_json));
  MEMFLEET_RETURN_IF_ERROR(RunWithDeviceId(c, kRefreshPlatformSql, device_id));
  return txn.Commit();
}

absl::Status SqliteStore::PutSweep(const SweepRecord& sweep) {
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(sweep.sweep_id, "sweep_id"));
  MEMFLEET_ASSIGN_OR_RETURN(std::string started_at, NormalizeOptionalTimestamp(sweep.started_at, "started_at"));
  MEMFLEET_ASSIGN_OR_RETURN(std::string finished_at, NormalizeOptionalTimestamp(sweep.finished_at, "finished_at"));
  Connection& c = *writer_;
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c.db));
  {
    MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(kUpsertSweepSql));
    ResetOnExit reset(st);
    MEMFLEET_RETURN_IF_ERROR(st->BindText(1, sweep.sweep_id));
    MEMFLEET_RETURN_IF_ERROR(st->BindText(2, started_at));
    MEMFLEET_RETURN_IF_ERROR(st->BindText(3, sweep.selector));
    MEMFLEET_RETURN_IF_ERROR(st->BindText(4, finished_at));
    MEMFLEET_RETURN_IF_ERROR(st->StepDone());
  }
  {
    // The record is the whole state: a device no longer listed is no longer part of the sweep.
    MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(kDeleteSweepDevicesSql));
    ResetOnExit reset(st);
    MEMFLEET_RETURN_IF_ERROR(st->BindText(1, sweep.sweep_id));
    MEMFLEET_RETURN_IF_ERROR(st->StepDone());
  }
  MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(kInsertSweepDeviceSql));
  ResetOnExit reset(st);
  for (const auto& [device_id, state] : sweep.states) {
    st->Reset();
    MEMFLEET_RETURN_IF_ERROR(st->BindText(1, sweep.sweep_id));
    MEMFLEET_RETURN_IF_ERROR(st->BindText(2, device_id));
    MEMFLEET_RETURN_IF_ERROR(st->BindText(3, state));
    MEMFLEET_RETURN_IF_ERROR(st->StepDone());
  }
  return txn.Commit();
}

// ---- reads ----

absl::StatusOr<bool> SqliteStore::HasCapture(const std::string& capture_id) {
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<std::string> owner, CaptureDevice(capture_id));
  return owner.has_value();
}

absl::StatusOr<std::optional<std::string>> SqliteStore::CaptureDevice(const std::string& capture_id) {
  Connection& c = reader();
  absl::MutexLock lock(&c.mu);
  return StoredDeviceOf(c, capture_id);
}

absl::StatusOr<std::vector<DeviceSummaryRow>> SqliteStore::ListDevices() {
  return QueryAll(reader(), ListDevicesSql(), {}, [](const Statement& st) {
    DeviceSummaryRow row;
    row.device = ReadDevice(st, 0);
    row.capture_count = NonNegative(st.ColumnInt64(kDeviceColumnCount));
    row.last_capture_at = st.ColumnText(kDeviceColumnCount + 1);
    row.last_total_kb = st.ColumnOptionalInt64(kDeviceColumnCount + 2);
    return row;
  });
}

absl::StatusOr<std::optional<DeviceRecord>> SqliteStore::GetDevice(const std::string& device_id) {
  return QueryFirst(reader(), GetDeviceSql(), {device_id}, [](const Statement& st) { return ReadDevice(st, 0); });
}

absl::StatusOr<std::optional<StoredReport>> SqliteStore::GetReport(const std::string& device_id,
                                                                   const std::string& at) {
  MEMFLEET_ASSIGN_OR_RETURN(std::string at_utc, NormalizeOptionalTimestamp(at, "at"));
  if (at_utc.empty()) return DecodeReports(QueryFirst(reader(), ReportLatestSql(), {device_id}, ReadStoredReport<Statement>));
  return DecodeReports(QueryFirst(reader(), ReportAtSql(), {device_id, at_utc}, ReadStoredReport<Statement>));
}

absl::StatusOr<std::optional<StoredReport>> SqliteStore::GetReportByCapture(const std::string& capture_id) {
  return DecodeReports(QueryFirst(reader(), ReportByCaptureSql(), {capture_id}, ReadStoredReport<Statement>));
}

absl::StatusOr<std::vector<HistoryRow>> SqliteStore::ProcessHistory(const std::string& device_id,
                                                                    const std::string& process_name,
                                                                    const std::string& metric,
                                                                    const std::string& since, uint32_t limit) {
  MEMFLEET_ASSIGN_OR_RETURN(const char* column, ProcessColumn(metric));
  MEMFLEET_ASSIGN_OR_RETURN(std::string since_utc, NormalizeOptionalTimestamp(since, "since"));
  Connection& c = reader();
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(ProcessTrendSql(column)));
  ResetOnExit reset(st);
  MEMFLEET_RETURN_IF_ERROR(st->BindText(1, device_id));
  MEMFLEET_RETURN_IF_ERROR(st->BindText(2, process_name));
  MEMFLEET_RETURN_IF_ERROR(st->BindText(3, since_utc));
  MEMFLEET_RETURN_IF_ERROR(st->BindInt64(4, limit == 0 ? -1 : static_cast<int64_t>(limit)));
  return OldestFirst(ReadAllRows(st, [](const Statement& row_st) {
    HistoryRow row;
    row.capture_id = row_st.ColumnText(0);
    row.captured_at = row_st.ColumnText(1);
    row.pid = static_cast<int>(row_st.ColumnInt64(2));  // stored from an int
    row.value_kb = row_st.ColumnOptionalInt64(3);
    return row;
  }));
}

absl::StatusOr<std::vector<HistoryRow>> SqliteStore::DeviceHistory(const std::string& device_id,
                                                                   const std::string& metric,
                                                                   const std::string& since, uint32_t limit) {
  MEMFLEET_ASSIGN_OR_RETURN(const char* column, DeviceColumn(metric));
  MEMFLEET_ASSIGN_OR_RETURN(std::string since_utc, NormalizeOptionalTimestamp(since, "since"));
  Connection& c = reader();
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(DeviceTrendSql(column)));
  ResetOnExit reset(st);
  MEMFLEET_RETURN_IF_ERROR(st->BindText(1, device_id));
  MEMFLEET_RETURN_IF_ERROR(st->BindText(2, since_utc));
  MEMFLEET_RETURN_IF_ERROR(st->BindInt64(3, limit == 0 ? -1 : static_cast<int64_t>(limit)));
  return OldestFirst(ReadAllRows(st, [](const Statement& row_st) {
    HistoryRow row;
    row.capture_id = row_st.ColumnText(0);
    row.captured_at = row_st.ColumnText(1);
    row.value_kb = row_st.ColumnOptionalInt64(3);
    return row;
  }));
}

absl::StatusOr<std::vector<FleetValueRow>> SqliteStore::LatestPerDevice(const std::string& metric,
                                                                        const std::string& process_name) {
  std::string sql;
  if (process_name.empty()) {
    MEMFLEET_ASSIGN_OR_RETURN(const char* column, DeviceColumn(metric));
    sql = LatestDeviceFigureSql(column);
  } else {
    MEMFLEET_ASSIGN_OR_RETURN(const char* column, ProcessColumn(metric));
    sql = LatestProcessFigureSql(column);
  }
  const auto read = [](const Statement& st) {
    FleetValueRow row;
    row.device = ReadDevice(st, 0);
    row.capture_id = st.ColumnText(kDeviceColumnCount);
    row.captured_at = st.ColumnText(kDeviceColumnCount + 1);
    row.value_kb = st.ColumnOptionalInt64(kDeviceColumnCount + 2);
    return row;
  };
  if (process_name.empty()) return QueryAll(reader(), sql, {}, read);
  return QueryAll(reader(), sql, {process_name}, read);
}

absl::Status SqliteStore::ForEachRawCapture(const std::string& device_id,
                                            const std::function<void(const RawCapture&)>& fn) {
  // Ids first, then one capture at a time with no lock held during `fn`: it may call ReplaceReport, and
  // only one raw blob is in memory at once.
  MEMFLEET_ASSIGN_OR_RETURN(std::vector<std::string> ids,
                            device_id.empty() ? QueryAll(reader(), kRawCaptureIdsAllSql, {}, ReadFirstText)
                                              : QueryAll(reader(), kRawCaptureIdsOfDeviceSql, {device_id}, ReadFirstText));
  for (const std::string& id : ids) {
    MEMFLEET_ASSIGN_OR_RETURN(std::optional<RawCapture> raw, GetRawCapture(id));
    if (raw.has_value()) fn(*raw);  // else deleted since the listing
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<Store::RawCapture>> SqliteStore::GetRawCapture(const std::string& capture_id) {
  return QueryFirst(reader(), kRawCaptureSql, {capture_id}, ReadRawCapture<Statement>);
}

absl::StatusOr<std::optional<SweepRecord>> SqliteStore::GetSweep(const std::string& sweep_id) {
  Connection& c = reader();
  absl::MutexLock lock(&c.mu);
  std::optional<SweepRecord> sweep;
  {
    MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(kGetSweepSql));
    ResetOnExit reset(st);
    MEMFLEET_RETURN_IF_ERROR(st->BindText(1, sweep_id));
    MEMFLEET_ASSIGN_OR_RETURN(sweep, ReadFirstRow(st, [](const Statement& row) {
      SweepRecord record;
      record.sweep_id = row.ColumnText(0);
      record.started_at = row.ColumnText(1);
      record.selector = row.ColumnText(2);
      record.finished_at = row.ColumnText(3);
      return record;
    }));
    if (!sweep.has_value()) return sweep;
  }
  // Two statements outside a transaction may see two snapshots; a sweep row is written with its states
  // in one transaction and states are never written alone, so the pair is consistent.
  MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(kGetSweepDevicesSql));
  ResetOnExit reset(st);
  MEMFLEET_RETURN_IF_ERROR(st->BindText(1, sweep_id));
  MEMFLEET_ASSIGN_OR_RETURN(auto states, ReadAllRows(st, [](const Statement& row) {
    return std::make_pair(row.ColumnText(0), row.ColumnText(1));
  }));
  sweep->states.insert(states.begin(), states.end());
  return sweep;
}

absl::StatusOr<std::vector<SweepRecord>> SqliteStore::UnfinishedSweeps() {
  MEMFLEET_ASSIGN_OR_RETURN(std::vector<std::string> ids,
                            QueryAll(reader(), kUnfinishedSweepIdsSql, {}, ReadFirstText));
  std::vector<SweepRecord> sweeps;
  for (const std::string& id : ids) {
    MEMFLEET_ASSIGN_OR_RETURN(std::optional<SweepRecord> sweep, GetSweep(id));
    if (sweep.has_value()) sweeps.push_back(*std::move(sweep));
  }
  return sweeps;
}

absl::StatusOr<Store::Stats> SqliteStore::GetStats() {
  // Aggregates without GROUP BY always return their one row.
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<Stats> stats, QueryFirst(reader(), kCaptureStatsSql, {}, [](const Statement& st) {
    Stats capture_stats;
    capture_stats.captures = NonNegative(st.ColumnInt64(0));
    capture_stats.raw_blob_bytes = NonNegative(st.ColumnInt64(1));
    capture_stats.raw_bytes = NonNegative(st.ColumnInt64(2));
    return capture_stats;
  }));
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<uint64_t> process_rows,
                            QueryFirst(reader(), kProcessRowCountSql, {},
                                       [](const Statement& st) { return NonNegative(st.ColumnInt64(0)); }));
  if (!stats.has_value() || !process_rows.has_value()) return absl::InternalError("a COUNT(*) returned no row");
  stats->process_rows = *process_rows;
  return *stats;
}

absl::StatusOr<std::vector<std::string>> SqliteStore::ExplainHotQuery(HotQuery query) {
  std::string sql;
  switch (query) {
    case HotQuery::kProcessTrend:
      sql = ProcessTrendSql("total_kb");
      break;
    case HotQuery::kDeviceTrend:
      sql = DeviceTrendSql("total_kb");
      break;
    case HotQuery::kLatestDeviceFigure:
      sql = LatestDeviceFigureSql("total_kb");
      break;
    case HotQuery::kLatestProcessFigure:
      sql = LatestProcessFigureSql("total_kb");
      break;
    case HotQuery::kReportAt:
      sql = ReportAtSql();
      break;
    case HotQuery::kCaptureProcessRows:
      sql = DeleteProcessSamplesSql();
      break;
  }
  Connection& c = reader();
  absl::MutexLock lock(&c.mu);
  return ExplainQueryPlan(c.db, sql);
}

// ---- Retention ----

namespace {

// A capture is pinned by a sweep that asked its device (sweep_devices names the device, and not as offline:
// an id no sweep of this server recorded, or one that never asked the device, pins nothing) and by a
// sweep's labels; the agent's own labels pin nothing (docs/reliability.md, "What retention keeps").
constexpr char kRetentionRowsSql[] =
    "SELECT c.capture_id, c.captured_at, r.total_kb, (c.sweep_id != '' AND EXISTS (SELECT 1 FROM sweep_devices AS s "
    "WHERE s.sweep_id = c.sweep_id AND s.device_id = c.device_id AND s.state != 'offline')) OR EXISTS (SELECT 1 "
    "FROM capture_labels AS l WHERE l.capture_id = c.capture_id AND l.source = 'sweep'), c.raw_base FROM captures "
    "AS c LEFT JOIN device_reports AS r ON r.capture_id = c.capture_id WHERE c.device_id = ?1 "
    "ORDER BY c.captured_at, c.capture_id";
constexpr char kDeleteCaptureSql[] = "DELETE FROM captures WHERE capture_id = ?1";
constexpr char kGetRetentionMarksSql[] =
    "SELECT hourly_before, daily_before FROM device_retention WHERE device_id = ?1";
// Canonical times compare as text; MAX keeps a mark from moving back, '' (none) being the least.
constexpr char kRecordRetentionSql[] =
    "INSERT INTO device_retention (device_id, hourly_before, daily_before) VALUES (?1, ?2, ?3) "
    "ON CONFLICT (device_id) DO UPDATE SET hourly_before = MAX(hourly_before, excluded.hourly_before), "
    "daily_before = MAX(daily_before, excluded.daily_before)";

absl::StatusOr<int64_t> PragmaInt(SqliteDb& db, const char* sql) {
  MEMFLEET_ASSIGN_OR_RETURN(Statement st, db.Prepare(sql));
  MEMFLEET_ASSIGN_OR_RETURN(StepResult r, st.Step());
  if (r != StepResult::kRow) return absl::InternalError(absl::StrCat("\"", sql, "\" returned no row"));
  return st.ColumnInt64(0);
}

absl::StatusOr<int64_t> FileBytes(SqliteDb& db) {
  MEMFLEET_ASSIGN_OR_RETURN(int64_t pages, PragmaInt(db, "PRAGMA page_count"));
  MEMFLEET_ASSIGN_OR_RETURN(int64_t page_size, PragmaInt(db, "PRAGMA page_size"));
  return pages * page_size;
}

}  // namespace

absl::StatusOr<std::vector<RetentionRow>> SqliteStore::RetentionRows(const std::string& device_id) {
  return QueryAll(reader(), kRetentionRowsSql, {device_id},
                  [](const Statement& st) {
                    RetentionRow row;
                    row.capture_id = st.ColumnText(0);
                    row.captured_at = st.ColumnText(1);
                    row.total_kb = st.ColumnOptionalInt64(2);
                    row.pinned = st.ColumnInt64(3) != 0;
                    row.keyframe_id = st.ColumnText(4);  // NULL reads as ""
                    return row;
                  });
}

absl::StatusOr<RetentionMarks> SqliteStore::GetRetentionMarks(const std::string& device_id) {
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<RetentionMarks> marks,
                            QueryFirst(reader(), kGetRetentionMarksSql, {device_id}, [](const Statement& st) {
                              return RetentionMarks{st.ColumnText(0), st.ColumnText(1)};
                            }));
  return marks.value_or(RetentionMarks{});
}

absl::Status SqliteStore::RecordRetention(const std::string& device_id, const RetentionMarks& marks) {
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(device_id, "device_id"));
  MEMFLEET_ASSIGN_OR_RETURN(std::string hourly, NormalizeOptionalTimestamp(marks.hourly_before, "hourly_before"));
  MEMFLEET_ASSIGN_OR_RETURN(std::string daily, NormalizeOptionalTimestamp(marks.daily_before, "daily_before"));
  Connection& c = *writer_;
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(kRecordRetentionSql));
  ResetOnExit reset(st);
  MEMFLEET_RETURN_IF_ERROR(st->BindText(1, device_id));
  MEMFLEET_RETURN_IF_ERROR(st->BindText(2, hourly));
  MEMFLEET_RETURN_IF_ERROR(st->BindText(3, daily));
  return st->StepDone();
}

absl::StatusOr<size_t> SqliteStore::DeleteCaptures(const std::vector<std::string>& capture_ids) {
  Connection& c = *writer_;
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(c.db));
  // Checked at COMMIT, so a keyframe and its deltas may go in any order; one a remaining delta needs
  // fails the transaction (raw_base has no ON DELETE action).
  MEMFLEET_RETURN_IF_ERROR(c.db.Exec("PRAGMA defer_foreign_keys = ON"));
  size_t deleted = 0;
  {
    MEMFLEET_ASSIGN_OR_RETURN(Statement * rows, c.Get(DeleteProcessSamplesSql()));
    ResetOnExit reset_rows(rows);
    MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(kDeleteCaptureSql));
    ResetOnExit reset(st);
    for (const std::string& id : capture_ids) {
      // The process rows first: they are found through the capture's device_reports row.
      rows->Reset();
      MEMFLEET_RETURN_IF_ERROR(rows->BindText(1, id));
      MEMFLEET_RETURN_IF_ERROR(rows->StepDone());
      st->Reset();
      MEMFLEET_RETURN_IF_ERROR(st->BindText(1, id));
      MEMFLEET_RETURN_IF_ERROR(st->StepDone());
      deleted += static_cast<size_t>(c.db.Changes());
    }
  }
  absl::Status committed = txn.Commit();
  if (committed.code() == absl::StatusCode::kInvalidArgument || committed.code() == absl::StatusCode::kFailedPrecondition) {
    return absl::FailedPreconditionError(absl::StrCat(
        "deleting ", capture_ids.size(), " captures would orphan a delta that stays (", committed.message(), ")"));
  }
  MEMFLEET_RETURN_IF_ERROR(committed);
  return deleted;
}

absl::StatusOr<int64_t> SqliteStore::ReturnFreePages(bool allow_vacuum) {
  Connection& c = *writer_;
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(int64_t before, FileBytes(c.db));
  MEMFLEET_ASSIGN_OR_RETURN(int64_t mode, PragmaInt(c.db, "PRAGMA auto_vacuum"));
  if (mode == 2) {  // INCREMENTAL
    MEMFLEET_RETURN_IF_ERROR(c.db.Exec("PRAGMA incremental_vacuum"));
  } else if (allow_vacuum) {
    MEMFLEET_RETURN_IF_ERROR(c.db.Exec("PRAGMA auto_vacuum = INCREMENTAL"));
    MEMFLEET_RETURN_IF_ERROR(c.db.Exec("VACUUM"));
  }
  MEMFLEET_ASSIGN_OR_RETURN(int64_t after, FileBytes(c.db));
  return before - after;
}

// ---- Tokens ----

namespace {

constexpr char kPutTokenSql[] =
    "INSERT INTO tokens (name, kind, device_id, sha256, created_at, revoked_at) VALUES (?1, ?2, ?3, ?4, ?5, '')";
constexpr char kFindTokenSql[] =
    "SELECT name, kind, device_id, sha256, created_at, revoked_at FROM tokens WHERE sha256 = ?1";
constexpr char kListTokensSql[] =
    "SELECT name, kind, device_id, sha256, created_at, revoked_at FROM tokens ORDER BY name";
constexpr char kHasTokensSql[] = "SELECT 1 FROM tokens LIMIT 1";
constexpr char kRevokeTokenSql[] = "UPDATE tokens SET revoked_at = ?2 WHERE name = ?1 AND revoked_at = ''";

}  // namespace

absl::Status SqliteStore::PutToken(const TokenRecord& token) {
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(token.name, "token name"));
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(token.sha256_hex, "token hash"));
  MEMFLEET_ASSIGN_OR_RETURN(std::string created_at, NormalizeTimestamp(token.created_at, "created_at"));
  Connection& c = *writer_;
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(kPutTokenSql));
  ResetOnExit reset(st);
  MEMFLEET_RETURN_IF_ERROR(st->BindText(1, token.name));
  MEMFLEET_RETURN_IF_ERROR(st->BindText(2, token.kind));
  MEMFLEET_RETURN_IF_ERROR(st->BindText(3, token.device_id));
  MEMFLEET_RETURN_IF_ERROR(st->BindText(4, token.sha256_hex));
  MEMFLEET_RETURN_IF_ERROR(st->BindText(5, created_at));
  absl::Status s = st->StepDone();
  if (s.code() == absl::StatusCode::kAlreadyExists) {
    return absl::AlreadyExistsError(absl::StrCat("a token named \"", token.name, "\" exists already (revoked names stay taken)"));
  }
  if (s.code() == absl::StatusCode::kInvalidArgument) {
    return absl::InvalidArgumentError(absl::StrCat("token kind \"", token.kind, "\" is not agent, read or admin"));
  }
  return s;
}

absl::StatusOr<std::optional<TokenRecord>> SqliteStore::FindTokenByHash(const std::string& sha256_hex) {
  return QueryFirst(reader(), kFindTokenSql, {sha256_hex}, ReadToken<Statement>);
}

absl::StatusOr<std::vector<TokenRecord>> SqliteStore::ListTokens() {
  return QueryAll(reader(), kListTokensSql, {}, ReadToken<Statement>);
}

absl::StatusOr<bool> SqliteStore::HasTokens() {
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<bool> row,
                            QueryFirst(reader(), kHasTokensSql, {}, [](const Statement&) { return true; }));
  return row.has_value();
}

absl::StatusOr<bool> SqliteStore::RevokeToken(const std::string& name, const std::string& revoked_at) {
  MEMFLEET_ASSIGN_OR_RETURN(std::string at, NormalizeTimestamp(revoked_at, "revoked_at"));
  Connection& c = *writer_;
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(kRevokeTokenSql));
  ResetOnExit reset(st);
  MEMFLEET_RETURN_IF_ERROR(st->BindText(1, name));
  MEMFLEET_RETURN_IF_ERROR(st->BindText(2, at));
  MEMFLEET_RETURN_IF_ERROR(st->StepDone());
  return c.db.Changes() > 0;
}

// ---- Baselines ----

namespace {

constexpr char kPutBaselineSql[] =
    "INSERT INTO baselines (name, imported_at, raw_text) VALUES (?1, ?2, ?3) RETURNING version";
constexpr char kGetBaselineSql[] =
    "SELECT version, name, imported_at, raw_text FROM baselines WHERE version = ?1";
constexpr char kGetLatestBaselineSql[] =
    "SELECT version, name, imported_at, raw_text FROM baselines ORDER BY version DESC LIMIT 1";
// Per device, its newest capture of the sweep (a device may have been captured twice in one sweep).
// `sweep_id != ''` lets the planner use the partial index captures_by_sweep (schema version 15).
std::string LatestReportsOfSweepSql() {
  return absl::StrCat(
      "SELECT ", ReportColumnsOfR("NULL"), " FROM captures c "
    "JOIN device_reports r ON r.capture_id = c.capture_id WHERE c.sweep_id = ?1 AND c.sweep_id != '' AND c.capture_id = (SELECT c2.capture_id FROM captures c2 "
    "WHERE c2.sweep_id = ?1 AND c2.sweep_id != '' AND c2.device_id = c.device_id ORDER BY c2.captured_at DESC, c2.capture_id DESC LIMIT 1) "
    "ORDER BY c.device_id");
}
std::string LatestReportsSinceSql() {
  return absl::StrCat(
      "SELECT ", ReportColumnsOfR("NULL"), " FROM devices d "
    "JOIN captures c ON c.capture_id = (SELECT c2.capture_id FROM captures c2 WHERE c2.device_id = d.device_id "
    "ORDER BY c2.captured_at DESC, c2.capture_id DESC LIMIT 1) JOIN device_reports r ON r.capture_id = c.capture_id "
    "WHERE c.captured_at >= ?1 ORDER BY d.device_id");
}

// The pairs come from a scan of captures_by_device_build_time alone, and each pair's latest capture is
// the last entry of its range there; the build is taken from the pair (the index), never from the table
// row, where it sits after raw_blob. IS, not =: captures stored before schema 8 have a NULL build.
std::string LatestReportsPerBuildSql() {
  return absl::StrCat(
    "WITH pairs AS (SELECT DISTINCT device_id, build_fingerprint FROM captures "
    "INDEXED BY captures_by_device_build_time) "
    "SELECT ", ReportColumnsOfR("p.build_fingerprint"), " FROM pairs p "
    "JOIN captures c ON c.capture_id = (SELECT c2.capture_id FROM captures c2 INDEXED BY "
    "captures_by_device_build_time WHERE c2.device_id = p.device_id AND c2.build_fingerprint IS p.build_fingerprint "
    "ORDER BY c2.captured_at DESC, c2.capture_id DESC LIMIT 1) JOIN device_reports r ON r.capture_id = c.capture_id "
    "WHERE c.captured_at >= ?1 ORDER BY p.device_id, p.build_fingerprint");
}

}  // namespace

absl::StatusOr<int64_t> SqliteStore::PutBaseline(const std::string& name, const std::string& imported_at,
                                                 const std::string& raw_text) {
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(name, "baseline name"));
  MEMFLEET_ASSIGN_OR_RETURN(std::string at, NormalizeTimestamp(imported_at, "imported_at"));
  Connection& c = *writer_;
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(kPutBaselineSql));
  ResetOnExit reset(st);
  MEMFLEET_RETURN_IF_ERROR(st->BindText(1, name));
  MEMFLEET_RETURN_IF_ERROR(st->BindText(2, at));
  MEMFLEET_RETURN_IF_ERROR(st->BindText(3, raw_text));
  MEMFLEET_ASSIGN_OR_RETURN(StepResult r, st->Step());
  if (r != StepResult::kRow) return absl::InternalError("storing the baseline returned no version");
  int64_t version = st->ColumnInt64(0);
  // RETURNING's row comes before the insert completes: step to the end so it is committed.
  MEMFLEET_ASSIGN_OR_RETURN(StepResult done, st->Step());
  if (done != StepResult::kDone) return absl::InternalError("storing the baseline returned two rows");
  return version;
}

absl::StatusOr<std::optional<BaselineRecord>> SqliteStore::GetBaseline(int64_t version) {
  if (version < 0) return absl::InvalidArgumentError("baseline version must be 1 or more (0 = the latest)");
  Connection& c = reader();
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(version == 0 ? kGetLatestBaselineSql : kGetBaselineSql));
  ResetOnExit reset(st);
  if (version != 0) MEMFLEET_RETURN_IF_ERROR(st->BindInt64(1, version));
  return ReadFirstRow(st, [](const Statement& row) {
    BaselineRecord b;
    b.version = row.ColumnInt64(0);
    b.name = row.ColumnText(1);
    b.imported_at = row.ColumnText(2);
    b.raw_text = row.ColumnText(3);
    return b;
  });
}

absl::StatusOr<std::vector<StoredReport>> SqliteStore::LatestReportsOfSweep(const std::string& sweep_id) {
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(sweep_id, "sweep_id"));
  return DecodeReports(QueryAll(reader(), LatestReportsOfSweepSql(), {sweep_id}, ReadStoredReport<Statement>));
}

absl::StatusOr<std::vector<StoredReport>> SqliteStore::LatestReportsSince(const std::string& since) {
  MEMFLEET_ASSIGN_OR_RETURN(std::string since_utc, NormalizeOptionalTimestamp(since, "since"));
  return DecodeReports(QueryAll(reader(), LatestReportsSinceSql(), {since_utc}, ReadStoredReport<Statement>));
}

absl::StatusOr<std::vector<StoredReport>> SqliteStore::LatestReportsPerBuild(const std::string& since) {
  MEMFLEET_ASSIGN_OR_RETURN(std::string since_utc, NormalizeOptionalTimestamp(since, "since"));
  return DecodeReports(QueryAll(reader(), LatestReportsPerBuildSql(), {since_utc}, ReadStoredReport<Statement>));
}

// ---- end Baselines ----

// ---- labels ----

absl::StatusOr<std::vector<LabelledCapture>> SqliteStore::LabelledCaptures(const LabelSet& all_of) {
  if (all_of.empty()) return absl::InvalidArgumentError("no label to look captures up by");
  const std::vector<StoredLabel> terms = StoredLabelsOf(all_of);
  Connection& c = reader();
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(Statement * st, c.Get(LabelledCapturesSql(terms.size())));
  ResetOnExit reset(st);
  int index = 1;
  for (const StoredLabel& term : terms) {
    MEMFLEET_RETURN_IF_ERROR(st->BindText(index++, term.key));
    MEMFLEET_RETURN_IF_ERROR(st->BindText(index++, term.value));
    MEMFLEET_RETURN_IF_ERROR(st->BindText(index++, term.source));
  }
  return ReadAllRows(st, [](const Statement& row) {
    LabelledCapture capture;
    capture.capture_id = row.ColumnText(0);
    capture.device_id = row.ColumnText(1);
    capture.captured_at = row.ColumnText(2);
    capture.sweep_id = row.ColumnText(3);
    if (!row.ColumnIsNull(4)) capture.build_fingerprint = row.ColumnText(4);
    return capture;
  });
}

absl::StatusOr<LabelSet> SqliteStore::CaptureLabels(const std::string& capture_id) {
  MEMFLEET_ASSIGN_OR_RETURN(
      std::vector<StoredLabel> rows, QueryAll(reader(), kCaptureLabelsSql, {capture_id}, [](const Statement& st) {
        return StoredLabel{st.ColumnText(0), st.ColumnText(1), st.ColumnText(2)};
      }));
  return LabelSetOf(std::move(rows));
}

absl::StatusOr<std::optional<int64_t>> SqliteStore::CaptureFigure(const std::string& capture_id,
                                                                  const std::string& metric,
                                                                  const std::string& process_name) {
  const auto read = [](const Statement& st) { return st.ColumnOptionalInt64(0); };
  absl::StatusOr<std::optional<std::optional<int64_t>>> row;
  if (process_name.empty()) {
    MEMFLEET_ASSIGN_OR_RETURN(const char* column, DeviceColumn(metric));
    row = QueryFirst(reader(), CaptureDeviceFigureSql(column), {capture_id}, read);
  } else {
    MEMFLEET_ASSIGN_OR_RETURN(const char* column, ProcessColumn(metric));
    row = QueryFirst(reader(), CaptureProcessFigureSql(column), {capture_id, process_name}, read);
  }
  if (!row.ok()) return row.status();
  return row->has_value() ? **row : std::nullopt;
}

}  // namespace memfleet::storage
