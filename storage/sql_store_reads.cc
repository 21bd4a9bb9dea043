// SqlStore's queries (query_store.h): devices, reports, figures over time and across the fleet, labels.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "storage/history_order.h"
#include "storage/process_block.h"
#include "storage/sql_store.h"
#include "storage/sql_store_internal.h"
#include "storage/store_rows.h"

namespace memfleet::storage {
namespace {

// A report is the compressed JSON in report_blobs, one probe by capture_no from the capture's
// device_reports row, and its base's frame when it is stored against one (a probe more). The columns
// ReadStoredReport reads, `build` the fifth, the stored tier the eighth, the capture's sweep the ninth.
std::string ReportColumnsOfR(const char* build) {
  return absl::StrCat(
      "c.capture_id, c.device_id, c.captured_at, (SELECT b.report_zstd FROM report_blobs AS b WHERE b.capture_no = "
      "r.capture_no), ",
      build,
      ", (SELECT b.base_no FROM report_blobs AS b WHERE b.capture_no = r.capture_no), "
      "(SELECT k.report_zstd FROM report_blobs AS b JOIN report_blobs AS k ON k.capture_no = b.base_no "
      "WHERE b.capture_no = r.capture_no), r.tier, c.sweep_id");
}

std::string ReportAtSql() {
  return absl::StrCat(
      "SELECT ", ReportColumnsOfR("NULL"),
      " FROM captures AS c JOIN device_reports AS r ON r.capture_id = c.capture_id "
      "WHERE c.device_id = ?1 AND c.captured_at <= ?2 ORDER BY c.captured_at DESC, c.capture_id DESC LIMIT 1");
}
std::string ReportLatestSql() {
  return absl::StrCat("SELECT ", ReportColumnsOfR("NULL"),
                      " FROM captures AS c JOIN device_reports AS r ON r.capture_id = c.capture_id "
                      "WHERE c.device_id = ?1 ORDER BY c.captured_at DESC, c.capture_id DESC LIMIT 1");
}
std::string ReportByCaptureSql() {
  return absl::StrCat(
      "SELECT ", ReportColumnsOfR("NULL"),
      " FROM captures AS c JOIN device_reports AS r ON r.capture_id = c.capture_id WHERE c.capture_id = ?1");
}

// Per device, its newest capture of the sweep (a device may have been captured twice in one sweep).
// `sweep_id != ''` lets SQLite's planner use the partial index captures_by_sweep.
std::string LatestReportsOfSweepSql() {
  return absl::StrCat(
      "SELECT ", ReportColumnsOfR("NULL"),
      " FROM captures c JOIN device_reports r ON r.capture_id = c.capture_id "
      "WHERE c.sweep_id = ?1 AND c.sweep_id != '' AND c.capture_id = (SELECT c2.capture_id FROM captures c2 "
      "WHERE c2.sweep_id = ?1 AND c2.sweep_id != '' AND c2.device_id = c.device_id ORDER BY c2.captured_at DESC, "
      "c2.capture_id DESC LIMIT 1) ORDER BY c.device_id");
}

std::string LatestReportsSinceSql() {
  return absl::StrCat(
      "SELECT ", ReportColumnsOfR("NULL"),
      " FROM devices d "
      "JOIN captures c ON c.capture_id = (SELECT c2.capture_id FROM captures c2 WHERE c2.device_id = d.device_id "
      "ORDER BY c2.captured_at DESC, c2.capture_id DESC LIMIT 1) JOIN device_reports r ON r.capture_id = c.capture_id "
      "WHERE c.captured_at >= ?1 ORDER BY d.device_id");
}

std::string ListDevicesSql() {
  return absl::StrCat("SELECT ", kDeviceColumnsOfD,
                      ", (SELECT COUNT(*) FROM captures AS c WHERE c.device_id = d.device_id)"
                      ", (SELECT MAX(c.captured_at) FROM captures AS c WHERE c.device_id = d.device_id)"
                      ", (SELECT r.total_kb FROM device_reports AS r WHERE r.device_id = d.device_id"
                      " ORDER BY r.captured_at DESC, r.capture_id DESC LIMIT 1)"
                      " FROM devices AS d ORDER BY d.device_id");
}

std::string GetDeviceSql() {
  return absl::StrCat("SELECT ", kDeviceColumnsOfD, " FROM devices AS d WHERE d.device_id = ?1");
}

// One page of a device's reports from a point on, in time order, each with its process block: a range of
// device_reports_by_device_time from ?2, past (?2, ?3) — the last (time, capture id) of the page before.
// Newest first, so that a limit keeps the newest points: each page ends before (?3, ?4), the last report
// of the page before ("~" sorts after every time: the first page starts at the newest). Each capture's
// stored tier (NULL: unknown); its sweep comes after (kHistorySweepsSql).
constexpr char kProcessTrendPageSql[] =
    "SELECT r.capture_id, r.captured_at, r.processes, r.tier FROM device_reports AS r WHERE r.device_id = ?1 "
    "AND r.captured_at >= ?2 AND r.captured_at <= ?3 AND (r.captured_at < ?3 OR r.capture_id < ?4) "
    "ORDER BY r.captured_at DESC, r.capture_id DESC LIMIT ?5";
constexpr char kNewestTrendPage[] = "~";
// Reports read a page: enough that a trend is few statements, few enough that a short one reads little.
constexpr int64_t kTrendPage = 2048;

// A device's range of device_reports_by_device_time, newest first (as kProcessTrendPageSql); the caller
// puts the rows in time order (OldestFirst). Each capture's sweep comes after (kHistorySweepsSql).
std::string DeviceTrendSql(const char* column) {
  return absl::StrCat("SELECT r.capture_id, r.captured_at, r.", column,
                      ", r.tier FROM device_reports AS r WHERE r.device_id = ?1 AND r.captured_at >= ?2"
                      " ORDER BY r.captured_at DESC, r.capture_id DESC LIMIT ?3");
}

// The sweep captures of a device at or after ?2: a range of captures_swept_by_device, which holds sweep
// captures only, a few entries a day (`sweep_id != ''` lets the planners use the partial index).
constexpr char kHistorySweepsSql[] =
    "SELECT c.capture_id, c.sweep_id FROM captures AS c WHERE c.device_id = ?1 AND c.captured_at >= ?2 "
    "AND c.sweep_id != ''";

// The labels of a device's captures at or after ?2 (the oldest point of a DeviceTrendSql answer or of a
// process's history): the same index range, each capture's labels by capture_labels' primary key.
constexpr char kDeviceTrendLabelsSql[] =
    "SELECT l.capture_id, l.key, l.value, l.source FROM device_reports AS r"
    " JOIN capture_labels AS l ON l.capture_id = r.capture_id WHERE r.device_id = ?1 AND r.captured_at >= ?2";

// The marks of each point of a device's history (oldest first), device or process alike: its sweep and
// its labels.
absl::Status AttachHistoryMarks(SqlConnection& db, const std::string& device_id, std::vector<HistoryRow>& points) {
  if (points.empty()) return absl::OkStatus();
  const SqlParams range = {SqlValue::Text(device_id), SqlValue::Text(points.front().captured_at)};
  MEMFLEET_ASSIGN_OR_RETURN(std::vector<CaptureSweepRow> sweeps,
                            QueryAll(db, kHistorySweepsSql, range, [](const SqlRow& row) {
                              return CaptureSweepRow{row.ColumnText(0), row.ColumnText(1)};
                            }));
  AttachSweeps(std::move(sweeps), points);
  MEMFLEET_ASSIGN_OR_RETURN(std::vector<CaptureLabelRow> labels,
                            QueryAll(db, kDeviceTrendLabelsSql, range, ReadCaptureLabelRow<SqlRow>));
  return AttachLabels(std::move(labels), points);
}

// Per device, the latest report is the last entry of its range in device_reports_by_device_time (one
// index probe per device, not a scan of every report). Ties on captured_at go to the greater capture_id,
// as in GetReport. SQLite: a correlated LIMIT 1 subquery for the capture id, joined back by its unique
// capture_id. PostgreSQL: a LATERAL LIMIT 1 over the same range, which reads the row it finds instead of
// probing the capture_id index for it again (a third less time a device at 1,000 devices).
std::string LatestReportSql(SqlDialect d, const std::string& columns) {
  if (d == SqlDialect::kPostgres) {
    return absl::StrCat("SELECT ", kDeviceColumnsOfD, ", r.capture_id, r.captured_at, r.", columns,
                        " FROM devices AS d CROSS JOIN LATERAL (SELECT latest.capture_id, latest.captured_at, latest.",
                        columns,
                        " FROM device_reports AS latest WHERE latest.device_id = d.device_id"
                        " ORDER BY latest.captured_at DESC, latest.capture_id DESC LIMIT 1) AS r ORDER BY d.device_id");
  }
  return absl::StrCat("SELECT ", kDeviceColumnsOfD, ", r.capture_id, r.captured_at, r.", columns,
                      " FROM devices AS d JOIN device_reports AS r ON r.capture_id = ("
                      "SELECT latest.capture_id FROM device_reports AS latest WHERE latest.device_id = d.device_id"
                      " ORDER BY latest.captured_at DESC, latest.capture_id DESC LIMIT 1)"
                      " ORDER BY d.device_id");
}

constexpr char kCaptureLabelsSql[] = "SELECT key, value, source FROM capture_labels WHERE capture_id = ?1 ORDER BY key";

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
constexpr char kCaptureProcessesSql[] = "SELECT processes FROM device_reports WHERE capture_id = ?1";

constexpr char kGetRetentionMarksSql[] =
    "SELECT hourly_before, daily_before FROM device_retention WHERE device_id = ?1";

// The figure of the processes named `name_no` in `block`, summed over their pids (a service and its
// short-lived twin, a restart caught mid-way count together, as the baseline check counts them:
// docs/accounting.md, "One name, several pids"); nullopt when no process has the name or one's figure is
// unknown.
absl::StatusOr<std::optional<int64_t>> FigureOfName(const std::string& block, int64_t name_no, size_t figure,
                                                    const std::string& capture_id) {
  absl::StatusOr<std::vector<ProcessSample>> named = ProcessSamplesNamed(block, name_no);
  if (!named.ok()) {
    return absl::Status(named.status().code(), absl::StrCat("capture ", capture_id, ": ", named.status().message()));
  }
  if (named->empty()) return std::optional<int64_t>();
  int64_t sum = 0;
  for (const ProcessSample& s : *named) {
    if (!s.figures[figure].has_value()) return std::optional<int64_t>();
    sum += *s.figures[figure];
  }
  return std::optional<int64_t>(sum);
}

FleetValueRow ReadFleetRow(const SqlRow& row) {
  FleetValueRow value;
  value.device = ReadDevice(row, 0);
  value.capture_id = row.ColumnText(kDeviceColumnCount);
  value.captured_at = row.ColumnText(kDeviceColumnCount + 1);
  return value;
}

}  // namespace

absl::StatusOr<std::vector<DeviceSummaryRow>> SqlStore::ListDevices() {
  SqlConnectionPool::Lease db = readers_->Acquire();
  return QueryAll(*db, ListDevicesSql(), {}, [](const SqlRow& row) {
    DeviceSummaryRow summary;
    summary.device = ReadDevice(row, 0);
    summary.capture_count = NonNegative(row.ColumnInt64(kDeviceColumnCount));
    summary.last_capture_at = row.ColumnText(kDeviceColumnCount + 1);
    summary.last_total_kb = row.ColumnOptionalInt64(kDeviceColumnCount + 2);
    return summary;
  });
}

absl::StatusOr<std::optional<DeviceRecord>> SqlStore::GetDevice(const std::string& device_id) {
  SqlConnectionPool::Lease db = readers_->Acquire();
  return QueryFirst(*db, GetDeviceSql(), {SqlValue::Text(device_id)},
                    [](const SqlRow& row) { return ReadDevice(row, 0); });
}

absl::StatusOr<std::optional<StoredReport>> SqlStore::GetReport(const std::string& device_id, const std::string& at) {
  MEMFLEET_ASSIGN_OR_RETURN(std::string at_utc, NormalizeOptionalTimestamp(at, "at"));
  SqlConnectionPool::Lease db = readers_->Acquire();
  if (at_utc.empty())
    return DecodeReports(QueryFirst(*db, ReportLatestSql(), {SqlValue::Text(device_id)}, ReadStoredReport<SqlRow>));
  return DecodeReports(
      QueryFirst(*db, ReportAtSql(), {SqlValue::Text(device_id), SqlValue::Text(at_utc)}, ReadStoredReport<SqlRow>));
}

absl::StatusOr<std::optional<StoredReport>> SqlStore::GetReportByCapture(const std::string& capture_id) {
  SqlConnectionPool::Lease db = readers_->Acquire();
  return DecodeReports(QueryFirst(*db, ReportByCaptureSql(), {SqlValue::Text(capture_id)}, ReadStoredReport<SqlRow>));
}

absl::StatusOr<std::vector<HistoryRow>> SqlStore::ProcessHistory(const std::string& device_id,
                                                                 const std::string& process_name,
                                                                 const std::string& metric, const std::string& since,
                                                                 uint32_t limit) {
  MEMFLEET_ASSIGN_OR_RETURN(size_t figure, ProcessFigureIndex(metric));
  MEMFLEET_ASSIGN_OR_RETURN(std::string since_utc, NormalizeOptionalTimestamp(since, "since"));
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<int64_t> name_no, KnownNameNumber(process_name));
  std::vector<HistoryRow> points;
  if (!name_no.has_value()) return points;  // no process of that name was ever stored
  // Read newest first (a capture's pids highest first), so that a limit keeps the newest points, and
  // handed out in time order, a capture's pids lowest first.
  std::string before_at = kNewestTrendPage;
  std::string before_id;
  SqlConnectionPool::Lease db = readers_->Acquire();
  for (;;) {
    int64_t rows = 0;
    absl::Status decoded;
    MEMFLEET_RETURN_IF_ERROR(
        db->Query(kProcessTrendPageSql,
                  {SqlValue::Text(device_id), SqlValue::Text(since_utc), SqlValue::Text(before_at),
                   SqlValue::Text(before_id), SqlValue::Int(kTrendPage)},
                  [&](const SqlRow& row) {
                    ++rows;
                    before_id = row.ColumnText(0);
                    before_at = row.ColumnText(1);
                    if (!decoded.ok() || (limit != 0 && points.size() >= limit)) return;
                    const std::string tier = row.ColumnIsNull(3) ? "" : row.ColumnText(3);
                    absl::StatusOr<std::vector<ProcessSample>> named = ProcessSamplesNamed(row.ColumnBlob(2), *name_no);
                    if (!named.ok()) {
                      decoded = absl::Status(named.status().code(),
                                             absl::StrCat("capture ", before_id, ": ", named.status().message()));
                      return;
                    }
                    for (auto s = named->rbegin(); s != named->rend(); ++s) {
                      if (limit != 0 && points.size() >= limit) break;
                      HistoryRow point;
                      point.capture_id = before_id;
                      point.captured_at = before_at;
                      point.pid = static_cast<int>(s->pid);
                      point.value_kb = s->figures[figure];
                      point.tier = tier;
                      points.push_back(std::move(point));
                    }
                  })
            .status());
    MEMFLEET_RETURN_IF_ERROR(decoded);
    if (rows < kTrendPage || (limit != 0 && points.size() >= limit)) break;
  }
  MEMFLEET_ASSIGN_OR_RETURN(points, OldestFirst(std::move(points)));
  MEMFLEET_RETURN_IF_ERROR(AttachHistoryMarks(*db, device_id, points));
  return points;
}

absl::StatusOr<std::vector<HistoryRow>> SqlStore::DeviceHistory(const std::string& device_id, const std::string& metric,
                                                                const std::string& since, uint32_t limit) {
  MEMFLEET_ASSIGN_OR_RETURN(const char* column, DeviceColumn(metric));
  MEMFLEET_ASSIGN_OR_RETURN(std::string since_utc, NormalizeOptionalTimestamp(since, "since"));
  SqlConnectionPool::Lease db = readers_->Acquire();
  MEMFLEET_ASSIGN_OR_RETURN(
      std::vector<HistoryRow> rows,
      OldestFirst(QueryAll(*db, DeviceTrendSql(column),
                           {SqlValue::Text(device_id), SqlValue::Text(since_utc), LimitOf(dialect_, limit)},
                           [](const SqlRow& row) {
                             HistoryRow h;
                             h.capture_id = row.ColumnText(0);
                             h.captured_at = row.ColumnText(1);
                             h.value_kb = row.ColumnOptionalInt64(2);
                             if (!row.ColumnIsNull(3)) h.tier = row.ColumnText(3);
                             return h;
                           })));
  MEMFLEET_RETURN_IF_ERROR(AttachHistoryMarks(*db, device_id, rows));
  return rows;
}

absl::StatusOr<std::vector<FleetValueRow>> SqlStore::LatestPerDevice(const std::string& metric,
                                                                     const std::string& process_name) {
  if (process_name.empty()) {
    MEMFLEET_ASSIGN_OR_RETURN(const char* column, DeviceColumn(metric));
    SqlConnectionPool::Lease db = readers_->Acquire();
    return QueryAll(*db, LatestReportSql(dialect_, column), {}, [](const SqlRow& row) {
      FleetValueRow value = ReadFleetRow(row);
      value.value_kb = row.ColumnOptionalInt64(kDeviceColumnCount + 2);
      return value;
    });
  }
  MEMFLEET_ASSIGN_OR_RETURN(size_t figure, ProcessFigureIndex(metric));
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<int64_t> name_no, KnownNameNumber(process_name));
  std::vector<std::pair<FleetValueRow, std::string>> rows;
  {
    SqlConnectionPool::Lease db = readers_->Acquire();
    MEMFLEET_ASSIGN_OR_RETURN(rows, QueryAll(*db, LatestReportSql(dialect_, "processes"), {}, [](const SqlRow& row) {
                                return std::make_pair(ReadFleetRow(row), row.ColumnBlob(kDeviceColumnCount + 2));
                              }));
  }
  // Several processes of the name (a restarted service): summed (FigureOfName); absent from the latest
  // report (or never stored anywhere): no value.
  std::vector<FleetValueRow> values;
  values.reserve(rows.size());
  for (auto& [value, block] : rows) {
    if (name_no.has_value()) {
      MEMFLEET_ASSIGN_OR_RETURN(value.value_kb, FigureOfName(block, *name_no, figure, value.capture_id));
    }
    values.push_back(std::move(value));
  }
  return values;
}

absl::StatusOr<RetentionMarks> SqlStore::GetRetentionMarks(const std::string& device_id) {
  SqlConnectionPool::Lease db = readers_->Acquire();
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<RetentionMarks> marks,
                            QueryFirst(*db, kGetRetentionMarksSql, {SqlValue::Text(device_id)}, [](const SqlRow& row) {
                              return RetentionMarks{row.ColumnText(0), row.ColumnText(1)};
                            }));
  return marks.value_or(RetentionMarks{});
}

absl::StatusOr<std::vector<StoredReport>> SqlStore::LatestReportsOfSweep(const std::string& sweep_id) {
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(sweep_id, "sweep_id"));
  SqlConnectionPool::Lease db = readers_->Acquire();
  return DecodeReports(QueryAll(*db, LatestReportsOfSweepSql(), {SqlValue::Text(sweep_id)}, ReadStoredReport<SqlRow>));
}

absl::StatusOr<std::vector<StoredReport>> SqlStore::LatestReportsSince(const std::string& since) {
  MEMFLEET_ASSIGN_OR_RETURN(std::string since_utc, NormalizeOptionalTimestamp(since, "since"));
  SqlConnectionPool::Lease db = readers_->Acquire();
  return DecodeReports(QueryAll(*db, LatestReportsSinceSql(), {SqlValue::Text(since_utc)}, ReadStoredReport<SqlRow>));
}

absl::StatusOr<std::vector<StoredReport>> SqlStore::LatestReportsPerBuild(const std::string& since) {
  MEMFLEET_ASSIGN_OR_RETURN(std::string since_utc, NormalizeOptionalTimestamp(since, "since"));
  SqlConnectionPool::Lease db = readers_->Acquire();
  return DecodeReports(
      QueryAll(*db, sql_->latest_reports_per_build, {SqlValue::Text(since_utc)}, ReadStoredReport<SqlRow>));
}

absl::StatusOr<std::vector<LabelledCapture>> SqlStore::LabelledCaptures(const LabelSet& all_of) {
  if (all_of.empty()) return absl::InvalidArgumentError("no label to look captures up by");
  const std::vector<StoredLabel> terms = StoredLabelsOf(all_of);
  SqlParams params;
  for (const StoredLabel& term : terms) {
    params.push_back(SqlValue::Text(term.key));
    params.push_back(SqlValue::Text(term.value));
    params.push_back(SqlValue::Text(term.source));
  }
  SqlConnectionPool::Lease db = readers_->Acquire();
  return QueryAll(*db, LabelledCapturesSql(terms.size()), std::move(params), [](const SqlRow& row) {
    LabelledCapture capture;
    capture.capture_id = row.ColumnText(0);
    capture.device_id = row.ColumnText(1);
    capture.captured_at = row.ColumnText(2);
    capture.sweep_id = row.ColumnText(3);
    capture.build_fingerprint = row.ColumnText(4);  // NULL reads as ""
    return capture;
  });
}

absl::StatusOr<LabelSet> SqlStore::CaptureLabels(const std::string& capture_id) {
  SqlConnectionPool::Lease db = readers_->Acquire();
  MEMFLEET_ASSIGN_OR_RETURN(std::vector<StoredLabel> rows,
                            QueryAll(*db, kCaptureLabelsSql, {SqlValue::Text(capture_id)}, [](const SqlRow& row) {
                              return StoredLabel{row.ColumnText(0), row.ColumnText(1), row.ColumnText(2)};
                            }));
  return LabelSetOf(std::move(rows));
}

absl::StatusOr<std::optional<int64_t>> SqlStore::CaptureFigure(const std::string& capture_id, const std::string& metric,
                                                               const std::string& process_name) {
  if (process_name.empty()) {
    MEMFLEET_ASSIGN_OR_RETURN(const char* column, DeviceColumn(metric));
    SqlConnectionPool::Lease db = readers_->Acquire();
    MEMFLEET_ASSIGN_OR_RETURN(auto value, QueryFirst(*db, CaptureDeviceFigureSql(column), {SqlValue::Text(capture_id)},
                                                     [](const SqlRow& row) { return row.ColumnOptionalInt64(0); }));
    return value.has_value() ? *value : std::nullopt;
  }
  MEMFLEET_ASSIGN_OR_RETURN(size_t figure, ProcessFigureIndex(metric));
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<int64_t> name_no, KnownNameNumber(process_name));
  if (!name_no.has_value()) return std::optional<int64_t>();
  std::optional<std::string> block;
  {
    SqlConnectionPool::Lease db = readers_->Acquire();
    MEMFLEET_ASSIGN_OR_RETURN(block, QueryFirst(*db, kCaptureProcessesSql, {SqlValue::Text(capture_id)},
                                                [](const SqlRow& row) { return row.ColumnBlob(0); }));
  }
  if (!block.has_value()) return std::optional<int64_t>();
  return FigureOfName(*block, *name_no, figure, capture_id);
}

}  // namespace memfleet::storage

namespace memfleet::storage {

absl::StatusOr<std::vector<std::string>> SqlStore::ExplainHotQuery(HotQuery query) {
  // Each query as its method runs it, with parameters of the shape it is given (the plan of a statement
  // with a NULL where a value goes can differ).
  std::string sql;
  SqlParams params;
  switch (query) {
    case HotQuery::kProcessTrend:
      sql = kProcessTrendPageSql;
      params = {SqlValue::Text("dev-0"), SqlValue::Text("2026-01-01T00:00:00.000Z"), SqlValue::Text(kNewestTrendPage),
                SqlValue::Text(""), SqlValue::Int(kTrendPage)};
      break;
    case HotQuery::kDeviceTrend:
      sql = DeviceTrendSql("total_kb");
      params = {SqlValue::Text("dev-0"), SqlValue::Text("2026-01-01T00:00:00.000Z"), LimitOf(dialect_, 0)};
      break;
    case HotQuery::kLatestDeviceFigure:
      sql = LatestReportSql(dialect_, "total_kb");
      break;
    case HotQuery::kLatestProcessFigure:
      sql = LatestReportSql(dialect_, "processes");
      break;
    case HotQuery::kHistorySweeps:
      sql = kHistorySweepsSql;
      params = {SqlValue::Text("dev-0"), SqlValue::Text("2026-01-01T00:00:00.000Z")};
      break;
    case HotQuery::kReportAt:
      sql = ReportAtSql();
      params = {SqlValue::Text("dev-0"), SqlValue::Text("2026-01-01T00:00:00.000Z")};
      break;
  }
  const bool sqlite = dialect_ == SqlDialect::kSqlite;
  SqlConnectionPool::Lease db = readers_->Acquire();
  // SQLite: EXPLAIN QUERY PLAN's columns are id, parent, notused, detail.
  return QueryAll(*db, absl::StrCat(sqlite ? "EXPLAIN QUERY PLAN " : "EXPLAIN (COSTS OFF) ", sql), std::move(params),
                  [sqlite](const SqlRow& row) { return row.ColumnText(sqlite ? 3 : 0); });
}

}  // namespace memfleet::storage
