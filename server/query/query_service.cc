#include "server/query/query_service.h"

#include <algorithm>
#include <future>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/process_name_match.h"
#include "report/process_figure.h"
#include "report/report_json.h"
#include "server/fleet/capture_labels.h"
#include "server/core/clock.h"
#include "server/core/grpc_status.h"
#include "server/history/reaccount.h"
#include "server/query/process_report_history.h"
#include "server/core/validation.h"

namespace memfleet::server {
namespace {

constexpr std::chrono::milliseconds kProgressPoll{250};
constexpr uint32_t kMaxSweepDeadlineS = 3600;

const std::vector<std::string>& DeviceFigures() {
  static const std::vector<std::string> kFigures = {
      "ddr_kb",        "mem_total_kb", "gcma_kb",      "static_reserved_kb",
      "kernel_cma_kb", "kernel_kb",    "processes_kb", "total_kb"};
  return kFigures;
}

const std::vector<std::string>& ProcessFigures() { return report::ProcessReportFigureNames(); }

bool Contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

absl::StatusOr<selector::Selector> ParseSelector(const v1::DeviceSelector& selector) {
  return selector::Selector::Parse(std::vector<std::string>(selector.where().begin(), selector.where().end()));
}

v1::SweepProgress::State ToProto(SweepState state) {
  switch (state) {
    case SweepState::kSent:
      return v1::SweepProgress::SENT;
    case SweepState::kCapturing:
      return v1::SweepProgress::CAPTURING;
    case SweepState::kStored:
      return v1::SweepProgress::STORED;
    case SweepState::kFailed:
      return v1::SweepProgress::FAILED;
    case SweepState::kOffline:
      return v1::SweepProgress::OFFLINE;
    case SweepState::kTimedOut:
      return v1::SweepProgress::TIMED_OUT;
  }
  return v1::SweepProgress::STATE_UNSPECIFIED;
}

std::string SweepSummary(const SweepUpdate& u) {
  std::vector<std::string> parts;
  for (SweepState s : {SweepState::kStored, SweepState::kFailed, SweepState::kOffline, SweepState::kTimedOut}) {
    auto it = u.state_counts.find(s);
    if (it != u.state_counts.end() && it->second > 0) parts.push_back(absl::StrCat(it->second, " ", SweepStateName(s)));
  }
  if (parts.empty()) return "no device matched";
  return absl::StrJoin(parts, ", ");
}

const std::string& GroupKeyField(const storage::DeviceRecord& d, const std::string& group_by) {
  if (group_by == "platform") return d.platform;
  if (group_by == "soc") return d.soc;
  if (group_by == "build") return d.build_fingerprint;
  return d.model;
}

// A report request's labels: `labels` as the sweep's, `agent_labels` as the agent's, each checked.
absl::StatusOr<storage::LabelSet> RequestedLabels(const v1::GetReportRequest& request) {
  storage::LabelSet labels;
  absl::StatusOr<capture::Labels> sweep = LabelsFromProto(request.labels());
  if (!sweep.ok()) return sweep.status();
  absl::StatusOr<capture::Labels> agent = LabelsFromProto(request.agent_labels());
  if (!agent.ok()) return agent.status();
  labels.sweep = *std::move(sweep);
  labels.agent = *std::move(agent);
  return labels;
}

}  // namespace

int64_t NearestRankPercentile(const std::vector<int64_t>& sorted_values, int p) {
  if (sorted_values.empty()) return 0;
  size_t n = sorted_values.size();
  size_t rank = (static_cast<size_t>(std::clamp(p, 0, 100)) * n + 99) / 100;  // ceil(p/100 * n)
  if (rank == 0) rank = 1;
  return sorted_values[rank - 1];
}

QueryService::QueryService(storage::QueryStore& queries, storage::CaptureStore& captures, AgentRegistry& registry,
                           SweepCoordinator& sweeps, WorkerPool& pool, const security::Authorizer& authorizer,
                           FleetLink* fleet)
    : store_(queries),
      captures_(captures),
      registry_(registry),
      sweeps_(sweeps),
      pool_(pool),
      authorizer_(authorizer),
      fleet_(fleet) {}

grpc::Status QueryService::Authorize(const grpc::ServerContext* context, const char* method) {
  security::Principal principal;
  grpc::Status s =
      security::AuthorizeCall(authorizer_, context, absl::StrCat("/memfleet.v1.QueryService/", method), &principal);
  if (!s.ok()) LogLine(absl::StrCat(method, " from ", context->peer(), " refused: ", s.error_message()));
  return s;
}

grpc::Status QueryService::CheckKnownDevice(const std::string& device_id) {
  absl::StatusOr<std::optional<storage::DeviceRecord>> device = store_.GetDevice(device_id);
  if (!device.ok()) return ToGrpcStatus(device.status());
  if (!device->has_value()) {
    return NotFound(
        absl::StrCat("unknown device \"", device_id, "\": no agent with this id has connected to this server"));
  }
  return grpc::Status::OK;
}

grpc::Status QueryService::ListDevices(grpc::ServerContext* context, const v1::ListDevicesRequest* request,
                                       v1::ListDevicesResponse* response) {
  if (grpc::Status denied = Authorize(context, "ListDevices"); !denied.ok()) return denied;
  absl::StatusOr<selector::Selector> selector = ParseSelector(request->selector());
  if (!selector.ok()) return ToGrpcStatus(selector.status());
  absl::StatusOr<std::vector<storage::DeviceSummaryRow>> rows = store_.ListDevices();
  if (!rows.ok()) return ToGrpcStatus(rows.status());
  absl::StatusOr<SelectedDevices> picked = SelectedDevices::Of(store_, *selector);
  if (!picked.ok()) return ToGrpcStatus(picked.status());
  // Device id -> the server holding its stream, across the fleet on a shared database ("" alone).
  absl::StatusOr<std::map<std::string, std::string>> servers = OnlineDevices(registry_, fleet_);
  if (!servers.ok()) return ToGrpcStatus(servers.status());
  absl::StatusOr<std::map<std::string, DeviceIncidents>> refused = RefusedIncidents(registry_, fleet_);
  if (!refused.ok()) return ToGrpcStatus(refused.status());
  std::sort(rows->begin(), rows->end(), [](const storage::DeviceSummaryRow& a, const storage::DeviceSummaryRow& b) {
    return a.device.device_id < b.device.device_id;
  });
  for (const storage::DeviceSummaryRow& row : *rows) {
    // A retired device is listed only when asked for (`devices --retired`), an active one only when not.
    if (row.device.retired() != request->retired()) continue;
    if (!picked->Contains(row.device)) continue;
    v1::DeviceSummary* d = response->add_devices();
    d->set_device_id(row.device.device_id);
    d->set_model(row.device.model);
    d->set_soc(row.device.soc);
    d->set_build_fingerprint(row.device.build_fingerprint);
    d->set_platform(row.device.platform);
    d->set_kernel(row.device.kernel);
    d->set_agent_version(row.device.agent_version);
    d->set_manufacturer(row.device.manufacturer);
    d->set_build_type(row.device.build_type);
    d->set_abi(row.device.abi);
    d->set_android_sdk(row.device.android_sdk);
    d->set_access(row.device.access);
    d->set_selinux(row.device.selinux);
    auto server = servers->find(row.device.device_id);
    d->set_online(server != servers->end());
    if (server != servers->end()) d->set_server_id(server->second);
    d->set_retired_at(row.device.retired_at);
    d->set_tier(row.device.tier);
    d->set_agent_tier(row.device.agent_tier);
    d->set_last_capture_at(row.last_capture_at);
    d->set_last_total_kb(row.last_total_kb.value_or(-1));
    d->set_capture_count(row.capture_count);
    d->set_dropped_captures(row.device.dropped_captures);
    if (row.device.clock_skew_s.has_value()) d->set_clock_skew_s(*row.device.clock_skew_s);
    auto found = refused->find(row.device.device_id);
    const DeviceIncidents incidents = found == refused->end() ? DeviceIncidents() : found->second;
    d->set_refused_streams(incidents.refused_streams);
    d->set_refused_stream_facts(incidents.refused_facts);
    d->set_future_captures_refused(incidents.future_captures);
  }
  return grpc::Status::OK;
}

grpc::Status QueryService::StartSweep(grpc::ServerContext* context, const v1::SweepRequest* request,
                                      grpc::ServerWriter<v1::SweepProgress>* writer) {
  if (grpc::Status denied = Authorize(context, "StartSweep"); !denied.ok()) return denied;
  absl::StatusOr<selector::Selector> selector = ParseSelector(request->selector());
  if (!selector.ok()) return ToGrpcStatus(selector.status());
  if (request->deadline_s() > kMaxSweepDeadlineS) {
    return Invalid(absl::StrCat("sweep deadline of ", request->deadline_s(), " s is longer than the limit of ",
                                kMaxSweepDeadlineS, " s"));
  }
  absl::StatusOr<capture::Labels> labels = LabelsFromProto(request->labels());
  if (!labels.ok()) return ToGrpcStatus(labels.status());
  absl::StatusOr<std::string> sweep_id =
      sweeps_.StartSweep(*selector, std::chrono::seconds(request->deadline_s()), *labels, request->full_smaps());
  if (!sweep_id.ok()) return ToGrpcStatus(sweep_id.status());

  size_t cursor = 0;
  for (;;) {
    absl::StatusOr<SweepUpdate> u = sweeps_.WaitForProgress(*sweep_id, cursor, kProgressPoll);
    if (!u.ok()) return ToGrpcStatus(u.status());
    for (const SweepEvent& e : u->events) {
      v1::SweepProgress p;
      p.set_sweep_id(*sweep_id);
      p.set_device_id(e.device_id);
      p.set_state(ToProto(e.state));
      p.set_message(e.message);
      p.set_capture_id(e.capture_id);
      p.set_devices_total(u->devices_total);
      p.set_devices_done(u->devices_done);
      // A CLI that went away does not stop the sweep: the coordinator finishes and records it alone.
      if (!writer->Write(p)) return grpc::Status(grpc::StatusCode::CANCELLED, "the client went away");
    }
    cursor = u->next_cursor;
    if (u->finished) {
      v1::SweepProgress last;
      last.set_sweep_id(*sweep_id);
      last.set_finished(true);
      last.set_devices_total(u->devices_total);
      last.set_devices_done(u->devices_done);
      last.set_message(SweepSummary(*u));
      writer->Write(last);
      return grpc::Status::OK;
    }
    if (context->IsCancelled()) return grpc::Status(grpc::StatusCode::CANCELLED, "the client went away");
  }
}

grpc::Status QueryService::GetReport(grpc::ServerContext* context, const v1::GetReportRequest* request,
                                     v1::GetReportResponse* response) {
  if (grpc::Status denied = Authorize(context, "GetReport"); !denied.ok()) return denied;
  const std::string& device_id = request->device_id();
  std::optional<storage::StoredReport> report;
  if (!request->capture_id().empty()) {
    if (absl::Status s = CheckCaptureId(request->capture_id()); !s.ok()) return ToGrpcStatus(s);
    if (!device_id.empty()) {
      if (absl::Status s = CheckDeviceId(device_id); !s.ok()) return ToGrpcStatus(s);
    }
    absl::StatusOr<std::optional<storage::StoredReport>> r = store_.GetReportByCapture(request->capture_id());
    if (!r.ok()) return ToGrpcStatus(r.status());
    if (!r->has_value()) return NotFound(absl::StrCat("no stored capture \"", request->capture_id(), "\""));
    if (!device_id.empty() && (*r)->device_id != device_id) {
      return NotFound(absl::StrCat("capture \"", request->capture_id(), "\" is of device \"", (*r)->device_id,
                                   "\", not \"", device_id, "\""));
    }
    report = std::move(*r);
  } else {
    if (absl::Status s = CheckDeviceId(device_id); !s.ok()) return ToGrpcStatus(s);
    absl::StatusOr<std::string> at = CheckOptionalTime("at", request->at());
    if (!at.ok()) return ToGrpcStatus(at.status());
    if (grpc::Status s = CheckKnownDevice(device_id); !s.ok()) return s;
    absl::StatusOr<storage::LabelSet> labels = RequestedLabels(*request);
    if (!labels.ok()) return ToGrpcStatus(labels.status());
    absl::StatusOr<std::optional<storage::StoredReport>> r =
        labels->empty() ? store_.GetReport(device_id, *at) : LatestLabelledReport(store_, device_id, *at, *labels);
    if (!r.ok()) return ToGrpcStatus(r.status());
    if (!r->has_value()) {
      const std::string carrying = labels->empty() ? "" : absl::StrCat(" carrying ", DescribeLabels(*labels));
      return NotFound(at->empty()
                          ? absl::StrCat("device \"", device_id, "\" has no stored capture", carrying,
                                         labels->empty() ? " yet" : "")
                          : absl::StrCat("device \"", device_id, "\" has no capture", carrying, " at or before ", *at));
    }
    report = std::move(*r);
  }
  absl::StatusOr<storage::LabelSet> stored_labels = store_.CaptureLabels(report->capture_id);
  if (!stored_labels.ok()) return ToGrpcStatus(stored_labels.status());
  response->set_capture_id(report->capture_id);
  response->set_device_id(report->device_id);
  response->set_captured_at(report->captured_at);
  response->set_report_json(report->report_json);
  response->set_tier(report->tier);
  response->set_sweep_id(report->sweep_id);
  LabelsToProto(stored_labels->sweep, response->mutable_labels());
  LabelsToProto(stored_labels->agent, response->mutable_agent_labels());
  return grpc::Status::OK;
}

grpc::Status QueryService::GetProcessHistory(grpc::ServerContext* context, const v1::ProcessHistoryRequest* request,
                                             v1::ProcessHistoryResponse* response) {
  if (grpc::Status denied = Authorize(context, "GetProcessHistory"); !denied.ok()) return denied;
  const std::string& device_id = request->device_id();
  if (absl::Status s = CheckDeviceId(device_id); !s.ok()) return ToGrpcStatus(s);
  std::string metric = request->metric().empty() ? "total_kb" : request->metric();
  if (request->process_name().empty()) return DeviceHistory(device_id, metric, *request, response);
  if (absl::Status s = CheckText("process name", request->process_name()); !s.ok()) return ToGrpcStatus(s);
  if (!report::IsProcessFigureName(metric)) {
    return Invalid(
        absl::StrCat("unknown process metric \"", Snippet(metric), "\"; one of: ", report::ProcessFigureNamesHint()));
  }
  absl::StatusOr<std::string> since = CheckOptionalTime("since", request->since());
  if (!since.ok()) return ToGrpcStatus(since.status());
  if (grpc::Status s = CheckKnownDevice(device_id); !s.ok()) return s;
  // The heaps and App Summary ride in the stored reports, not in columns: read from each report.
  absl::StatusOr<std::vector<storage::HistoryRow>> rows =
      report::IsBreakdownFigureName(metric)
          ? ReportFigureHistory(store_, device_id, request->process_name(), metric, *since, request->limit())
          : store_.ProcessHistory(device_id, request->process_name(), metric, *since, request->limit());
  if (!rows.ok()) return ToGrpcStatus(rows.status());
  if (rows->empty() && since->empty()) {
    return NotFound(absl::StrCat("no process named \"", Snippet(request->process_name()),
                                 "\" in the stored captures of device \"", device_id, "\""));
  }
  return AnswerHistory(device_id, *rows, response);
}

grpc::Status QueryService::GetFleet(grpc::ServerContext* context, const v1::FleetRequest* request,
                                    v1::FleetResponse* response) {
  if (grpc::Status denied = Authorize(context, "GetFleet"); !denied.ok()) return denied;
  std::string metric = request->metric().empty() ? "device.total_kb" : request->metric();
  std::string figure;
  bool process_metric = false;
  if (metric.rfind("device.", 0) == 0) {
    figure = metric.substr(7);
    if (!Contains(DeviceFigures(), figure)) {
      return Invalid(absl::StrCat("unknown device metric \"", Snippet(metric),
                                  "\"; device.<figure> with one of: ", absl::StrJoin(DeviceFigures(), ", ")));
    }
    if (!request->process_name().empty()) return Invalid("a process name goes with a process.<figure> metric");
  } else if (metric.rfind("process.", 0) == 0) {
    figure = metric.substr(8);
    process_metric = true;
    if (!Contains(ProcessFigures(), figure)) {
      return Invalid(absl::StrCat("unknown process metric \"", Snippet(metric),
                                  "\"; process.<figure> with one of: ", absl::StrJoin(ProcessFigures(), ", ")));
    }
    if (request->process_name().empty()) return Invalid(absl::StrCat("metric ", metric, " needs a process name"));
    if (absl::Status s = CheckText("process name", request->process_name()); !s.ok()) return ToGrpcStatus(s);
  } else {
    return Invalid(absl::StrCat("metric \"", Snippet(metric), "\" is neither device.<figure> nor process.<figure>"));
  }
  std::string group_by = request->group_by().empty() ? "model" : request->group_by();
  if (group_by != "model" && group_by != "platform" && group_by != "soc" && group_by != "build") {
    return Invalid(absl::StrCat("cannot group by \"", Snippet(group_by), "\"; one of: model, platform, soc, build"));
  }
  absl::StatusOr<selector::Selector> selector = ParseSelector(request->selector());
  if (!selector.ok()) return ToGrpcStatus(selector.status());

  absl::StatusOr<std::vector<storage::FleetValueRow>> rows =
      store_.LatestPerDevice(figure, process_metric ? request->process_name() : "");
  if (!rows.ok()) return ToGrpcStatus(rows.status());
  if (absl::Status s = ScopeToSelection(*selector, figure, process_metric ? request->process_name() : "", *rows);
      !s.ok()) {
    return ToGrpcStatus(s);
  }
  if (process_metric) {
    // A name typed as `memfleet process` takes it ("surfaceflinger" for /system/bin/surfaceflinger).
    absl::StatusOr<std::string> name = ResolveFleetProcess(request->process_name(), *rows);
    if (!name.ok()) return ToGrpcStatus(name.status());
    if (*name != request->process_name()) {
      rows = store_.LatestPerDevice(figure, *name);
      if (!rows.ok()) return ToGrpcStatus(rows.status());
      if (absl::Status s = ScopeToSelection(*selector, figure, *name, *rows); !s.ok()) return ToGrpcStatus(s);
    }
    response->set_process_name(*name);
  }

  std::vector<const storage::FleetValueRow*> selected;
  std::map<std::string, std::vector<int64_t>> groups;
  std::map<std::string, uint32_t> unknown;
  std::map<std::string, std::map<std::string, uint32_t>> tiers;  // group -> tier -> devices in its figures
  for (const storage::FleetValueRow& row : *rows) {
    if (row.device.retired()) continue;  // left the farm (`devices retire`)
    selected.push_back(&row);
    // "" (devices that did not report it) is a group of its own; each view writes it as it writes no value.
    const std::string& key = GroupKeyField(row.device, group_by);
    groups[key];  // a group of unknowns only is still a group
    // Unknown values are listed and counted, never aggregated as 0 nor dropped.
    if (!row.value_kb.has_value()) {
      ++unknown[key];
      continue;
    }
    groups[key].push_back(*row.value_kb);
    ++tiers[key][row.device.tier];
  }
  for (auto& [key, values] : groups) {
    std::sort(values.begin(), values.end());
    v1::FleetGroup* g = response->add_groups();
    g->set_key(key);
    g->set_devices(static_cast<uint32_t>(values.size()));
    g->set_unknown(unknown[key]);
    for (const auto& [tier, devices] : tiers[key]) (*g->mutable_tier_devices())[tier] = devices;
    if (values.empty()) continue;
    g->set_min_kb(values.front());
    g->set_p50_kb(NearestRankPercentile(values, 50));
    g->set_p90_kb(NearestRankPercentile(values, 90));
    g->set_max_kb(values.back());
  }
  std::sort(selected.begin(), selected.end(), [](const storage::FleetValueRow* a, const storage::FleetValueRow* b) {
    if (a->value_kb.has_value() != b->value_kb.has_value()) return a->value_kb.has_value();
    if (a->value_kb != b->value_kb) return *a->value_kb > *b->value_kb;
    return a->device.device_id < b->device.device_id;
  });
  for (const storage::FleetValueRow* row : selected) {
    v1::FleetRow* r = response->add_rows();
    r->set_device_id(row->device.device_id);
    r->set_model(row->device.model);
    r->set_platform(row->device.platform);
    r->set_build(row->device.build_fingerprint);
    r->set_captured_at(row->captured_at);
    r->set_value_known(row->value_kb.has_value());
    r->set_value_kb(row->value_kb.value_or(0));
  }
  return grpc::Status::OK;
}

grpc::Status QueryService::DeviceHistory(const std::string& device_id, const std::string& metric,
                                         const v1::ProcessHistoryRequest& request,
                                         v1::ProcessHistoryResponse* response) {
  if (!Contains(DeviceFigures(), metric)) {
    return Invalid(absl::StrCat("unknown device figure ", QuotedSnippet(metric),
                                " (no --process); one of: ", absl::StrJoin(DeviceFigures(), ", ")));
  }
  absl::StatusOr<std::string> since = CheckOptionalTime("since", request.since());
  if (!since.ok()) return ToGrpcStatus(since.status());
  if (grpc::Status s = CheckKnownDevice(device_id); !s.ok()) return s;
  absl::StatusOr<std::vector<storage::HistoryRow>> rows =
      store_.DeviceHistory(device_id, metric, *since, request.limit());
  if (!rows.ok()) return ToGrpcStatus(rows.status());
  if (rows->empty() && since->empty())
    return NotFound(absl::StrCat("device \"", device_id, "\" has no capture stored"));
  return AnswerHistory(device_id, *rows, response);
}

grpc::Status QueryService::AnswerHistory(const std::string& device_id, const std::vector<storage::HistoryRow>& rows,
                                         v1::ProcessHistoryResponse* response) {
  absl::StatusOr<storage::RetentionMarks> marks = store_.GetRetentionMarks(device_id);
  if (!marks.ok()) return ToGrpcStatus(marks.status());
  response->set_hourly_before(marks->hourly_before);
  response->set_daily_before(marks->daily_before);
  for (const storage::HistoryRow& row : rows) {
    v1::HistoryPoint* p = response->add_points();
    p->set_captured_at(row.captured_at);
    p->set_capture_id(row.capture_id);
    p->set_pid(row.pid);  // 0 for a device figure
    p->set_value_known(row.value_kb.has_value());
    p->set_value_kb(row.value_kb.value_or(0));
    p->set_sweep_id(row.sweep_id);
    p->set_tier(row.tier);
    LabelsToProto(row.labels.sweep, p->mutable_labels());
    LabelsToProto(row.labels.agent, p->mutable_agent_labels());
  }
  return grpc::Status::OK;
}

absl::StatusOr<std::string> QueryService::ResolveFleetProcess(const std::string& typed,
                                                              const std::vector<storage::FleetValueRow>& rows) {
  // The exact name on some device: nothing to resolve, and no report to read.
  for (const storage::FleetValueRow& row : rows) {
    if (row.value_kb.has_value()) return typed;
  }
  std::vector<std::string> names;
  for (const storage::FleetValueRow& row : rows) {
    absl::StatusOr<std::optional<storage::StoredReport>> stored = store_.GetReportByCapture(row.capture_id);
    if (!stored.ok()) return stored.status();
    if (!stored->has_value()) continue;
    absl::StatusOr<report::Report> report = report::ReportFromJson((*stored)->report_json);
    if (!report.ok()) continue;  // an unreadable report has no names to offer
    for (const auto& [pid, process] : report->processes) names.push_back(process.name);
  }
  absl::StatusOr<std::string> resolved = ResolveProcessName(typed, names, "in the selected devices' reports");
  // Known on no device: the rows say "no value" for each, as before, rather than failing the query.
  if (!resolved.ok() && resolved.status().code() == absl::StatusCode::kNotFound) return typed;
  return resolved;
}

absl::Status QueryService::ScopeToSelection(const selector::Selector& selector, const std::string& figure,
                                            const std::string& process_name,
                                            std::vector<storage::FleetValueRow>& rows) {
  absl::StatusOr<SelectedDevices> picked = SelectedDevices::Of(store_, selector);
  if (!picked.ok()) return picked.status();
  std::vector<storage::FleetValueRow> scoped;
  for (storage::FleetValueRow& row : rows) {
    if (!picked->Contains(row.device)) continue;
    auto it = picked->labelled().find(row.device.device_id);
    if (it != picked->labelled().end() && it->second.capture_id != row.capture_id) {
      absl::StatusOr<std::optional<int64_t>> value = store_.CaptureFigure(it->second.capture_id, figure, process_name);
      if (!value.ok()) return value.status();
      row.capture_id = it->second.capture_id;
      row.captured_at = it->second.captured_at;
      row.value_kb = *value;
    }
    scoped.push_back(std::move(row));
  }
  rows = std::move(scoped);
  return absl::OkStatus();
}

grpc::Status QueryService::Reaccount(grpc::ServerContext* context, const v1::ReaccountRequest* request,
                                     v1::ReaccountResponse* response) {
  if (grpc::Status denied = Authorize(context, "Reaccount"); !denied.ok()) return denied;
  const std::string& device_id = request->device_id();
  if (!device_id.empty()) {
    if (absl::Status s = CheckDeviceId(device_id); !s.ok()) return ToGrpcStatus(s);
    if (grpc::Status s = CheckKnownDevice(device_id); !s.ok()) return s;
  }
  if (!reaccount_mu_.TryLock()) return grpc::Status(grpc::StatusCode::ABORTED, "a re-account is already running");
  grpc::Status status = ReaccountLocked(device_id, response);
  reaccount_mu_.Unlock();
  return status;
}

grpc::Status QueryService::ReaccountLocked(const std::string& device_id, v1::ReaccountResponse* response) {
  auto done = std::make_shared<std::promise<absl::StatusOr<ReaccountResult>>>();
  std::future<absl::StatusOr<ReaccountResult>> result = done->get_future();
  // In a fleet the run is shared, as `memfleet-server --reaccount`'s: servers re-accounting the same
  // history at once (by either way) split its captures.
  if (!pool_.Submit([this, device_id, done] {
        done->set_value(fleet_ != nullptr ? ReaccountSharedCaptures(captures_, fleet_->store(), device_id, NowRfc3339())
                                          : ReaccountCaptures(captures_, device_id));
      })) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is shutting down");
  }
  absl::StatusOr<ReaccountResult> r = result.get();
  if (!r.ok()) return ToGrpcStatus(r.status());
  response->set_reaccounted(r->reaccounted);
  response->set_failed(r->failed);
  response->set_skipped_raw_dropped(r->skipped_raw_dropped);
  return grpc::Status::OK;
}

}  // namespace memfleet::server
