#include "storage/backends/history_migration.h"

#include <stdlib.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/bounded_json.h"  // nlohmann::json, the parsed reports compared
#include "common/status_macros.h"
#include "report/report_json.h"
#include "storage/store_rows.h"
#include "storage/sqlite/schema.h"
#include "storage/sqlite/sqlite_db.h"
#include "storage/sqlite/sqlite_store.h"

namespace memfleet::storage {
namespace {

// ---- copying ----

absl::StatusOr<bool> TargetIsEmpty(SqlStore& to) {
  MEMFLEET_ASSIGN_OR_RETURN(Store::Stats stats, to.GetStats());
  MEMFLEET_ASSIGN_OR_RETURN(std::vector<DeviceSummaryRow> devices, to.ListDevices());
  MEMFLEET_ASSIGN_OR_RETURN(bool has_tokens, to.HasTokens());
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<BaselineRecord> baseline, to.GetBaseline(0));
  MEMFLEET_ASSIGN_OR_RETURN(HistoryRowCounts counts, to.CountHistoryRows());
  return stats.captures == 0 && devices.empty() && !has_tokens && !baseline.has_value() && counts.sweeps == 0 &&
         counts.retention_marks == 0;
}

absl::Status CopyTokens(Store& from, SqlStore& to, CopiedHistory& copied) {
  MEMFLEET_ASSIGN_OR_RETURN(std::vector<TokenRecord> tokens, from.ListTokens());
  for (const TokenRecord& token : tokens) {
    absl::Status put = to.PutToken(token);  // the hash, never a secret: there is none to copy
    if (absl::IsAlreadyExists(put)) {
      ++copied.tokens_present;
    } else if (put.ok()) {
      ++copied.tokens;
    } else {
      return put;
    }
    if (!token.revoked_at.empty()) MEMFLEET_RETURN_IF_ERROR(to.RevokeToken(token.name, token.revoked_at).status());
  }
  return absl::OkStatus();
}

// Versions are numbered in import order with no gaps; each keeps its number.
absl::Status CopyBaselines(Store& from, SqlStore& to, CopiedHistory& copied) {
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<BaselineRecord> latest, from.GetBaseline(0));
  const int64_t last = latest.has_value() ? latest->version : 0;
  for (int64_t version = 1; version <= last; ++version) {
    MEMFLEET_ASSIGN_OR_RETURN(std::optional<BaselineRecord> baseline, from.GetBaseline(version));
    if (!baseline.has_value()) {
      return absl::DataLossError(absl::StrCat("baseline version ", version, " is missing from the SQLite file"));
    }
    MEMFLEET_ASSIGN_OR_RETURN(std::optional<BaselineRecord> there, to.GetBaseline(version));
    if (there.has_value()) {
      ++copied.baselines_present;
      continue;
    }
    MEMFLEET_ASSIGN_OR_RETURN(int64_t stored,
                              to.PutBaseline(baseline->name, baseline->imported_at, baseline->raw_text));
    if (stored != version) {
      return absl::FailedPreconditionError(
          absl::StrCat("baseline version ", version, " was stored as version ", stored, " in PostgreSQL"));
    }
    ++copied.baselines;
  }
  return absl::OkStatus();
}

// A device row holds its dropped-capture total: a device already there is not upserted again, which
// would add its drops twice.
absl::Status CopyDevices(Store& from, SqlStore& to, CopiedHistory& copied) {
  MEMFLEET_ASSIGN_OR_RETURN(std::vector<DeviceSummaryRow> devices, from.ListDevices());
  for (const DeviceSummaryRow& row : devices) {
    MEMFLEET_ASSIGN_OR_RETURN(std::optional<DeviceRecord> there, to.GetDevice(row.device.device_id));
    if (there.has_value()) {
      ++copied.devices_present;
      continue;
    }
    MEMFLEET_RETURN_IF_ERROR(to.UpsertDevice(row.device));
    if (row.device.retired()) {
      MEMFLEET_ASSIGN_OR_RETURN(bool retired, to.RetireDevice(row.device.device_id, row.device.retired_at));
      if (!retired) return absl::InternalError(absl::StrCat("device ", row.device.device_id, " vanished while copied"));
    }
    ++copied.devices;
  }
  return absl::OkStatus();
}

// The capture as PutCapture takes it, from the source's interfaces and its facts.
absl::StatusOr<CaptureRecord> ReadCapture(Store& from, const CaptureFacts& facts) {
  const std::string& id = facts.capture_id;
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<Store::RawCapture> raw, from.GetRawCapture(id));
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<StoredReport> report, from.GetReportByCapture(id));
  if (!raw.has_value() || !report.has_value()) {
    return absl::DataLossError(absl::StrCat("capture ", id, " has no ", raw.has_value() ? "report" : "raw capture"));
  }
  absl::StatusOr<report::Report> parsed = report::ReportFromJson(report->report_json);
  if (!parsed.ok()) return absl::DataLossError(absl::StrCat("capture ", id, ": ", parsed.status().message()));
  CaptureRecord capture;
  capture.capture_id = id;
  capture.device_id = raw->device_id;
  capture.captured_at = raw->captured_at;
  capture.received_at = facts.received_at;
  capture.sweep_id = facts.sweep_id;
  capture.raw_codec = std::move(raw->raw_codec);
  capture.raw_blob = std::move(raw->raw_blob);
  capture.raw_base = std::move(raw->raw_base);
  capture.raw_bytes = facts.raw_bytes;
  capture.report = *std::move(parsed);
  capture.report_json = std::move(report->report_json);
  // As stored, not as the report reads: a capture stored before tiers stays unknown in the copy.
  capture.stored_tier = std::move(report->tier);
  capture.build_fingerprint = facts.build_fingerprint;
  MEMFLEET_ASSIGN_OR_RETURN(capture.labels, from.CaptureLabels(id));
  return capture;
}

// Whole captures first, then the deltas: a delta's keyframe is then always stored before it.
absl::Status CopyCaptures(MigrationSource& from, SqlStore& to, bool resume, CopiedHistory& copied) {
  for (const bool deltas : {false, true}) {
    MEMFLEET_RETURN_IF_ERROR(from.history->ForEachCapture([&](const CaptureFacts& facts) -> absl::Status {
      if (facts.is_delta != deltas) return absl::OkStatus();
      if (resume) {
        MEMFLEET_ASSIGN_OR_RETURN(bool there, to.HasCapture(facts.capture_id));
        if (there) {
          ++copied.captures_present;
          return absl::OkStatus();
        }
      }
      MEMFLEET_ASSIGN_OR_RETURN(CaptureRecord capture, ReadCapture(*from.store, facts));
      MEMFLEET_ASSIGN_OR_RETURN(bool inserted, to.PutCapture(capture));
      ++(inserted ? copied.captures : copied.captures_present);
      return absl::OkStatus();
    }));
  }
  return absl::OkStatus();
}

absl::Status CopySweeps(MigrationSource& from, SqlStore& to, CopiedHistory& copied) {
  MEMFLEET_ASSIGN_OR_RETURN(std::vector<std::string> ids, from.history->SweepIds());
  for (const std::string& id : ids) {
    MEMFLEET_ASSIGN_OR_RETURN(std::optional<SweepRecord> sweep, from.store->GetSweep(id));
    if (!sweep.has_value()) continue;  // listed, then gone: the source changed while copied
    MEMFLEET_RETURN_IF_ERROR(to.PutSweep(*sweep));
    ++copied.sweeps;
  }
  return absl::OkStatus();
}

absl::Status CopyRetentionMarks(Store& from, SqlStore& to, CopiedHistory& copied) {
  MEMFLEET_ASSIGN_OR_RETURN(std::vector<DeviceSummaryRow> devices, from.ListDevices());
  for (const DeviceSummaryRow& row : devices) {
    MEMFLEET_ASSIGN_OR_RETURN(RetentionMarks marks, from.GetRetentionMarks(row.device.device_id));
    if (marks.hourly_before.empty() && marks.daily_before.empty()) continue;
    MEMFLEET_RETURN_IF_ERROR(to.RecordRetention(row.device.device_id, marks));
    ++copied.retention_marks;
  }
  return absl::OkStatus();
}

// ---- checking ----

// Accumulates HistoryCheck lines.
class Checker {
 public:
  void Count(const std::string& kind, uint64_t sqlite, uint64_t postgres) {
    check_.checked.push_back(absl::StrCat(kind, ": ", sqlite, " in SQLite, ", postgres, " in PostgreSQL"));
    if (sqlite != postgres) Mismatch(absl::StrCat(kind, ": ", sqlite, " in SQLite but ", postgres, " in PostgreSQL"));
  }
  // `what` compared field by field: the fields as text, joined.
  void Same(const std::string& what, const std::string& sqlite, const std::string& postgres) {
    if (sqlite != postgres)
      Mismatch(absl::StrCat(what, " differs: SQLite {", sqlite, "}, PostgreSQL {", postgres, "}"));
  }
  void Checked(std::string line) { check_.checked.push_back(std::move(line)); }
  void Mismatch(std::string line) { check_.mismatches.push_back(std::move(line)); }
  size_t mismatch_count() const { return check_.mismatches.size(); }
  HistoryCheck Done() { return std::move(check_); }

 private:
  HistoryCheck check_;
};

std::string OptionalText(const std::optional<int64_t>& v) { return v.has_value() ? absl::StrCat(*v) : "null"; }

std::string DeviceFields(const DeviceSummaryRow& row) {
  const DeviceRecord& d = row.device;
  return absl::StrJoin({d.device_id,
                        d.model,
                        d.soc,
                        d.build_fingerprint,
                        d.kernel,
                        d.agent_version,
                        absl::StrCat(d.page_size),
                        d.platform,
                        d.last_seen_at,
                        absl::StrCat(d.dropped_captures),
                        OptionalText(d.clock_skew_s),
                        d.manufacturer,
                        d.build_type,
                        d.abi,
                        d.android_sdk,
                        d.access,
                        d.selinux,
                        d.retired_at,
                        d.agent_tier,
                        absl::StrCat(row.capture_count),
                        row.last_capture_at,
                        OptionalText(row.last_total_kb)},
                       "|");
}

std::string TokenFields(const TokenRecord& t) {
  return absl::StrJoin({t.name, t.kind, t.device_id, t.sha256_hex, t.created_at, t.revoked_at}, "|");
}

std::string SweepFields(const std::optional<SweepRecord>& s) {
  if (!s.has_value()) return "none";
  std::string text = absl::StrJoin({s->sweep_id, s->started_at, s->selector, s->finished_at, s->server_id}, "|");
  for (const auto& [device, state] : s->states) absl::StrAppend(&text, "|", device, "=", state);
  return text;
}

std::string LabelFields(const LabelSet& labels) {
  std::string text;
  for (const auto& [key, value] : labels.sweep) absl::StrAppend(&text, text.empty() ? "" : ",", key, "=", value);
  absl::StrAppend(&text, ";agent:");
  for (const auto& [key, value] : labels.agent) absl::StrAppend(&text, key, "=", value, ",");
  return text;
}

absl::Status CheckDevices(Store& from, SqlStore& to, Checker& check) {
  MEMFLEET_ASSIGN_OR_RETURN(std::vector<DeviceSummaryRow> a, from.ListDevices());
  MEMFLEET_ASSIGN_OR_RETURN(std::vector<DeviceSummaryRow> b, to.ListDevices());
  check.Count("devices", a.size(), b.size());
  const size_t before = check.mismatch_count();
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    check.Same(absl::StrCat("device ", a[i].device.device_id), DeviceFields(a[i]), DeviceFields(b[i]));
    MEMFLEET_ASSIGN_OR_RETURN(RetentionMarks ma, from.GetRetentionMarks(a[i].device.device_id));
    MEMFLEET_ASSIGN_OR_RETURN(RetentionMarks mb, to.GetRetentionMarks(a[i].device.device_id));
    check.Same(absl::StrCat("retention marks of ", a[i].device.device_id), ma.hourly_before + "|" + ma.daily_before,
               mb.hourly_before + "|" + mb.daily_before);
  }
  if (check.mismatch_count() == before) {
    check.Checked(
        "devices: every field equal (dropped captures, clock skew, retirement, capture count, latest "
        "total, retention marks included)");
  }
  return absl::OkStatus();
}

absl::Status CheckCaptureStats(Store& from, SqlStore& to, Checker& check) {
  MEMFLEET_ASSIGN_OR_RETURN(Store::Stats a, from.GetStats());
  MEMFLEET_ASSIGN_OR_RETURN(Store::Stats b, to.GetStats());
  check.Count("captures", a.captures, b.captures);
  check.Count("raw capture bytes stored", a.raw_blob_bytes, b.raw_blob_bytes);
  check.Count("raw capture bytes uncompressed", a.raw_bytes, b.raw_bytes);
  check.Count("process rows", a.process_rows, b.process_rows);
  return absl::OkStatus();
}

absl::Status CheckTokensAndBaselines(Store& from, SqlStore& to, Checker& check) {
  MEMFLEET_ASSIGN_OR_RETURN(std::vector<TokenRecord> ta, from.ListTokens());
  MEMFLEET_ASSIGN_OR_RETURN(std::vector<TokenRecord> tb, to.ListTokens());
  check.Count("tokens", ta.size(), tb.size());
  for (size_t i = 0; i < ta.size() && i < tb.size(); ++i) {
    check.Same(absl::StrCat("token ", ta[i].name), TokenFields(ta[i]), TokenFields(tb[i]));
  }
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<BaselineRecord> la, from.GetBaseline(0));
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<BaselineRecord> lb, to.GetBaseline(0));
  const int64_t versions = la.has_value() ? la->version : 0;
  check.Count("baseline versions", NonNegative(versions), NonNegative(lb.has_value() ? lb->version : 0));
  for (int64_t v = 1; v <= versions; ++v) {
    MEMFLEET_ASSIGN_OR_RETURN(std::optional<BaselineRecord> a, from.GetBaseline(v));
    MEMFLEET_ASSIGN_OR_RETURN(std::optional<BaselineRecord> b, to.GetBaseline(v));
    const auto fields = [](const std::optional<BaselineRecord>& r) {
      return r.has_value() ? absl::StrCat(r->name, "|", r->imported_at, "|", r->raw_text.size(), " bytes") : "none";
    };
    if (a.has_value() && b.has_value() && a->raw_text != b->raw_text) {
      check.Mismatch(absl::StrCat("baseline version ", v, ": the stored file differs"));
    }
    check.Same(absl::StrCat("baseline version ", v), fields(a), fields(b));
  }
  return absl::OkStatus();
}

absl::Status CheckSweepsAndCounts(MigrationSource& from, SqlStore& to, Checker& check) {
  MEMFLEET_ASSIGN_OR_RETURN(HistoryRowCounts a, from.history->RowCounts());
  MEMFLEET_ASSIGN_OR_RETURN(HistoryRowCounts b, to.CountHistoryRows());
  check.Count("sweeps", a.sweeps, b.sweeps);
  check.Count("sweep device states", a.sweep_devices, b.sweep_devices);
  check.Count("labels", a.labels, b.labels);
  check.Count("retention marks", a.retention_marks, b.retention_marks);
  MEMFLEET_ASSIGN_OR_RETURN(std::vector<std::string> ids, from.history->SweepIds());
  for (const std::string& id : ids) {
    MEMFLEET_ASSIGN_OR_RETURN(std::optional<SweepRecord> sa, from.store->GetSweep(id));
    MEMFLEET_ASSIGN_OR_RETURN(std::optional<SweepRecord> sb, to.GetSweep(id));
    check.Same(absl::StrCat("sweep ", id), SweepFields(sa), SweepFields(sb));
  }
  return absl::OkStatus();
}

// One capture on both sides: its report (parsed JSON, so that equal documents compare equal whatever
// their spacing), raw capture and labels.
absl::Status CheckCapture(Store& from, SqlStore& to, const std::string& id, Checker& check) {
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<StoredReport> ra, from.GetReportByCapture(id));
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<StoredReport> rb, to.GetReportByCapture(id));
  if (!ra.has_value() || !rb.has_value()) {
    check.Mismatch(absl::StrCat("capture ", id, ": no report in ", ra.has_value() ? "PostgreSQL" : "SQLite"));
    return absl::OkStatus();
  }
  check.Same(absl::StrCat("capture ", id), ra->device_id + "|" + ra->captured_at + "|" + ra->tier,
             rb->device_id + "|" + rb->captured_at + "|" + rb->tier);
  const JsonBounds bounds{report::kMaxReportJsonBytes, kMaxJsonDepth};
  absl::StatusOr<nlohmann::json> ja = ParseBoundedJson(ra->report_json, bounds);
  absl::StatusOr<nlohmann::json> jb = ParseBoundedJson(rb->report_json, bounds);
  if (!ja.ok() || !jb.ok() || *ja != *jb) {
    check.Mismatch(absl::StrCat("capture ", id, ": the reports differ (parsed JSON)"));
  }
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<Store::RawCapture> wa, from.GetRawCapture(id));
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<Store::RawCapture> wb, to.GetRawCapture(id));
  if (!wa.has_value() || !wb.has_value() || wa->raw_codec != wb->raw_codec || wa->raw_base != wb->raw_base ||
      wa->raw_blob != wb->raw_blob) {
    check.Mismatch(absl::StrCat("capture ", id, ": the raw captures differ"));
  }
  MEMFLEET_ASSIGN_OR_RETURN(LabelSet la, from.CaptureLabels(id));
  MEMFLEET_ASSIGN_OR_RETURN(LabelSet lb, to.CaptureLabels(id));
  check.Same(absl::StrCat("labels of capture ", id), LabelFields(la), LabelFields(lb));
  return absl::OkStatus();
}

// `sample` captures spread evenly over the history, the oldest and the newest among them.
absl::Status CheckCaptureSample(MigrationSource& from, SqlStore& to, size_t sample, Checker& check) {
  MEMFLEET_ASSIGN_OR_RETURN(Store::Stats stats, from.store->GetStats());
  const uint64_t total = stats.captures;
  if (total == 0 || sample == 0) return absl::OkStatus();
  const uint64_t picks = std::min<uint64_t>(sample, total);
  uint64_t index = 0, next_pick = 0, picked = 0;
  const size_t before = check.mismatch_count();
  MEMFLEET_RETURN_IF_ERROR(from.history->ForEachCapture([&](const CaptureFacts& facts) -> absl::Status {
    // Pick k lands on floor(k * (total - 1) / (picks - 1)): 0 and total - 1 included.
    if (index++ != next_pick) return absl::OkStatus();
    ++picked;
    next_pick = picks == 1 ? total : picked * (total - 1) / (picks - 1);
    return CheckCapture(*from.store, to, facts.capture_id, check);
  }));
  check.Checked(absl::StrCat("reports: ", picked, " of ", total,
                             " captures compared (report as parsed JSON, raw "
                             "capture, labels)",
                             check.mismatch_count() == before ? ", all equal" : ""));
  return absl::OkStatus();
}

}  // namespace

MigrationSource::MigrationSource() = default;
MigrationSource::MigrationSource(MigrationSource&&) noexcept = default;
MigrationSource& MigrationSource::operator=(MigrationSource&&) noexcept = default;

MigrationSource::~MigrationSource() {
  store.reset();
  history.reset();
  if (!upgraded_copy.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(upgraded_copy, ec);
  }
}

namespace {

// The file's schema version; FailedPrecondition when it is no SQLite file memfleet wrote.
absl::StatusOr<int> SchemaVersionOf(const std::string& path) {
  absl::StatusOr<SqliteDb> db = SqliteDb::Open(path, SQLITE_OPEN_READONLY);
  absl::StatusOr<int> version = db.ok() ? ReadSchemaVersion(*db) : absl::StatusOr<int>(db.status());
  if (!version.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot open ", path, " read-only: ", version.status().message()));
  }
  if (*version == 0) return absl::FailedPreconditionError(absl::StrCat(path, " is not a memfleet database"));
  return *version;
}

// A copy of the file at `path` in a new folder under `work_dir`, migrated to this build's schema; the folder.
absl::StatusOr<std::string> UpgradedCopy(const std::string& path, const std::string& work_dir) {
  std::string folder = work_dir + "/memfleet-migrate-XXXXXX";
  if (mkdtemp(folder.data()) == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot make a folder under ", work_dir, " for an upgraded copy"));
  }
  const std::string copy = folder + "/memfleet.db";
  absl::Status made = [&]() -> absl::Status {
    MEMFLEET_ASSIGN_OR_RETURN(SqliteDb from, SqliteDb::Open(path, SQLITE_OPEN_READONLY));
    MEMFLEET_RETURN_IF_ERROR(from.CopyTo(copy));
    MEMFLEET_ASSIGN_OR_RETURN(SqliteDb to, SqliteDb::Open(copy, SQLITE_OPEN_READWRITE));
    return MigrateToLatest(to);
  }();
  if (!made.ok()) {
    std::error_code ec;
    std::filesystem::remove_all(folder, ec);
    return absl::Status(made.code(), absl::StrCat("upgrading a copy of ", path, ": ", made.message()));
  }
  return folder;
}

}  // namespace

absl::StatusOr<MigrationSource> OpenMigrationSource(const std::string& sqlite_path, const std::string& work_dir) {
  MEMFLEET_ASSIGN_OR_RETURN(int version, SchemaVersionOf(sqlite_path));
  MigrationSource source;
  std::string read_from = sqlite_path;
  if (version < LatestSchemaVersion()) {
    MEMFLEET_ASSIGN_OR_RETURN(source.upgraded_copy, UpgradedCopy(sqlite_path, work_dir));
    read_from = source.upgraded_copy + "/memfleet.db";
  }
  SqliteStoreOptions options;
  options.read_only = true;
  absl::StatusOr<std::unique_ptr<SqlStore>> store = OpenSqliteStore(read_from, options);
  if (!store.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot open ", sqlite_path, " read-only: ", store.status().message()));
  }
  source.store = *std::move(store);
  MEMFLEET_ASSIGN_OR_RETURN(source.history, SqliteHistory::Open(read_from));
  return source;
}

absl::StatusOr<CopiedHistory> CopyHistory(MigrationSource& from, SqlStore& to, bool resume) {
  if (!resume) {
    MEMFLEET_ASSIGN_OR_RETURN(bool empty, TargetIsEmpty(to));
    if (!empty) {
      return absl::FailedPreconditionError(
          "the PostgreSQL database already holds a history; --resume goes on with a copy that stopped part way");
    }
  }
  CopiedHistory copied;
  MEMFLEET_RETURN_IF_ERROR(CopyTokens(*from.store, to, copied));
  MEMFLEET_RETURN_IF_ERROR(CopyBaselines(*from.store, to, copied));
  MEMFLEET_RETURN_IF_ERROR(CopyDevices(*from.store, to, copied));
  MEMFLEET_RETURN_IF_ERROR(CopyCaptures(from, to, resume, copied));
  MEMFLEET_RETURN_IF_ERROR(CopySweeps(from, to, copied));
  MEMFLEET_RETURN_IF_ERROR(CopyRetentionMarks(*from.store, to, copied));
  return copied;
}

absl::StatusOr<HistoryCheck> VerifyHistory(MigrationSource& from, SqlStore& to, size_t report_sample) {
  Checker check;
  MEMFLEET_RETURN_IF_ERROR(CheckDevices(*from.store, to, check));
  MEMFLEET_RETURN_IF_ERROR(CheckCaptureStats(*from.store, to, check));
  MEMFLEET_RETURN_IF_ERROR(CheckTokensAndBaselines(*from.store, to, check));
  MEMFLEET_RETURN_IF_ERROR(CheckSweepsAndCounts(from, to, check));
  MEMFLEET_RETURN_IF_ERROR(CheckCaptureSample(from, to, report_sample, check));
  return check.Done();
}

}  // namespace memfleet::storage
