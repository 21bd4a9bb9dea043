#include "server/http/metrics_source.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "report/report_json.h"
#include "server/core/clock.h"

namespace memfleet::server {
namespace {

std::optional<double> UnixSeconds(const std::string& rfc3339) {
  absl::Time t;
  std::string error;
  if (rfc3339.empty() || !absl::ParseTime(absl::RFC3339_full, rfc3339, &t, &error)) return std::nullopt;
  return absl::ToDoubleSeconds(t - absl::UnixEpoch());
}

}  // namespace

const MetricsSource::CachedFigures& MetricsSource::FiguresOf(const storage::StoredReport& report) {
  CachedFigures& cached = cache_[report.device_id];
  if (cached.capture_id == report.capture_id && !cached.capture_id.empty()) return cached;
  cached.capture_id = report.capture_id;
  absl::StatusOr<report::Report> parsed = report::ReportFromJson(report.report_json);
  if (!parsed.ok()) {
    LogLine(absl::StrCat("/metrics: the report of capture ", report.capture_id,
                         " cannot be read: ", parsed.status().message()));
    cached.figures.reset();
    return cached;
  }
  cached.figures = metrics::FiguresOf(*parsed, top_processes_);
  return cached;
}

metrics::ServerCountersSnapshot MetricsSource::ServerSnapshot() const {
  metrics::ServerCountersSnapshot s = counters_.Snapshot();
  s.agents_connected = registry_.size();
  if (sweeps_ != nullptr) {
    SweepCoordinator::Counts sweeps = sweeps_->CountSweeps();
    s.sweeps_started = sweeps.started;
    s.sweeps_running = sweeps.running;
  }
  if (ingest_ != nullptr) {
    IngestService::Load load = ingest_->load();
    s.inflight_bytes = load.inflight_bytes;
    s.inflight_capacity_bytes = load.inflight_capacity_bytes;
    s.streams_waiting_for_room = load.streams_waiting_for_room;
    s.capture_commits = load.capture_commits;
  }
  return s;
}

absl::StatusOr<std::string> MetricsSource::Render() {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<std::vector<storage::DeviceSummaryRow>> devices = store_.ListDevices();
  if (!devices.ok()) {
    return absl::UnavailableError(absl::StrCat("cannot read the devices: ", devices.status().message()));
  }
  absl::StatusOr<std::vector<storage::StoredReport>> reports = store_.LatestReportsSince("");
  if (!reports.ok()) {
    return absl::UnavailableError(absl::StrCat("cannot read the latest reports: ", reports.status().message()));
  }
  std::map<std::string, const storage::StoredReport*> latest;
  for (const storage::StoredReport& r : *reports) latest[r.device_id] = &r;
  absl::StatusOr<std::map<std::string, std::string>> online = OnlineDevices(registry_, fleet_);
  if (!online.ok()) {
    return absl::UnavailableError(absl::StrCat("cannot read which agents are online: ", online.status().message()));
  }

  metrics::RenderInput input;
  input.devices.reserve(devices->size());
  for (const storage::DeviceSummaryRow& row : *devices) {
    if (row.device.retired()) continue;  // left the farm: no series, not even up=0
    metrics::DeviceMetricsRow d;
    d.device_id = row.device.device_id;
    d.model = row.device.model;
    d.platform = row.device.platform;
    d.build = row.device.build_fingerprint;
    d.up = online->count(d.device_id) != 0;
    d.dropped_captures = row.device.dropped_captures;
    d.tier = row.device.tier;
    d.last_capture_unix_s = UnixSeconds(row.last_capture_at);
    auto it = latest.find(d.device_id);
    if (it != latest.end()) {
      const CachedFigures& cached = FiguresOf(*it->second);
      d.figures = cached.figures;
      if (!cached.figures.has_value()) ++input.unreadable_reports;
    }
    input.devices.push_back(std::move(d));
  }
  input.server = ServerSnapshot();
  input.app_summary = app_summary_;
  return metrics::RenderFleetMetrics(input);
}

}  // namespace memfleet::server
