#include "server/query/baseline_service.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/process_name_match.h"
#include "report/report_json.h"
#include "baseline/baseline_file.h"
#include "baseline/regressions.h"
#include "server/core/clock.h"
#include "server/fleet/capture_labels.h"
#include "selector/selector.h"
#include "server/fleet/selected_devices.h"
#include "server/core/grpc_status.h"
#include "server/core/validation.h"

namespace memfleet::server {
namespace {

// The process a typed --process name means among the candidate reports' names: exact, else a unique base
// name or end (names are cmdlines verbatim). `none` is the message when nothing matches.
absl::StatusOr<std::string> ResolveRegressionProcess(const std::string& typed,
                                                     const std::vector<baseline::DeviceSample>& candidates,
                                                     const std::string& none) {
  std::vector<std::string> names;
  for (const baseline::DeviceSample& s : candidates) {
    for (const auto& [pid, p] : s.report.processes) names.push_back(p.name);
  }
  absl::StatusOr<std::string> resolved = ResolveProcessName(typed, names, "in the compared reports");
  if (resolved.ok() || resolved.status().code() != absl::StatusCode::kNotFound) return resolved;
  std::vector<std::string> closest = ClosestProcessNames(typed, names);
  if (closest.empty()) return absl::NotFoundError(none);
  return absl::NotFoundError(absl::StrCat(none, "; closest names: \"", absl::StrJoin(closest, "\", \""), "\""));
}

// The stored baseline (a version, or the latest), parsed; NOT_FOUND saying how to import one.
absl::StatusOr<std::pair<storage::BaselineRecord, baseline::Baseline>> LoadBaseline(storage::BaselineStore& store,
                                                                                    int64_t version) {
  absl::StatusOr<std::optional<storage::BaselineRecord>> record = store.GetBaseline(version);
  if (!record.ok()) return record.status();
  if (!record->has_value()) {
    return absl::NotFoundError(
        version == 0 ? "no baseline is stored (run `memfleet baseline import FILE` first)"
                     : absl::StrCat("no baseline version ", version, " (`memfleet baseline show` gives the latest)"));
  }
  absl::StatusOr<baseline::Baseline> parsed = baseline::ParseBaselineFile((*record)->raw_text);
  if (!parsed.ok()) {
    // It was valid at import: the rules changed since. Say so rather than check with half a baseline.
    return absl::FailedPreconditionError(absl::StrCat("stored baseline version ", (*record)->version,
                                                      " no longer validates: ", parsed.status().message()));
  }
  return std::make_pair(**record, *std::move(parsed));
}

}  // namespace

BaselineService::BaselineService(storage::BaselineStore& baselines, storage::QueryStore& reports,
                                 const security::Authorizer& authorizer)
    : baselines_(baselines), store_(reports), authorizer_(authorizer) {}

grpc::Status BaselineService::Authorize(const grpc::ServerContext* context, const char* method) {
  security::Principal principal;
  grpc::Status s =
      security::AuthorizeCall(authorizer_, context, absl::StrCat("/memfleet.v1.BaselineService/", method), &principal);
  if (!s.ok()) LogLine(absl::StrCat(method, " from ", context->peer(), " refused: ", s.error_message()));
  return s;
}

absl::StatusOr<storage::LabelSet> BaselineService::SelectorLabels(const v1::DeviceSelector& selector_proto) {
  absl::StatusOr<selector::Selector> selector =
      selector::Selector::Parse(std::vector<std::string>(selector_proto.where().begin(), selector_proto.where().end()));
  if (!selector.ok()) return selector.status();
  return LabelTermsOf(*selector);
}

absl::StatusOr<std::vector<baseline::DeviceSample>> BaselineService::Samples(
    const std::vector<storage::StoredReport>& reports, const v1::DeviceSelector& selector_proto) {
  absl::StatusOr<selector::Selector> selector =
      selector::Selector::Parse(std::vector<std::string>(selector_proto.where().begin(), selector_proto.where().end()));
  if (!selector.ok()) return selector.status();
  absl::StatusOr<std::vector<storage::DeviceSummaryRow>> devices = store_.ListDevices();
  if (!devices.ok()) return devices.status();
  std::map<std::string, storage::DeviceRecord> by_id;
  for (const storage::DeviceSummaryRow& row : *devices) by_id[row.device.device_id] = row.device;
  std::vector<baseline::DeviceSample> samples;
  for (const storage::StoredReport& r : reports) {
    auto it = by_id.find(r.device_id);
    if (it == by_id.end() || !selector->MatchesDevice(FactsOf(it->second))) continue;
    absl::StatusOr<report::Report> report = report::ReportFromJson(r.report_json);
    if (!report.ok()) {
      LogLine(absl::StrCat("baseline: stored report of capture ", r.capture_id,
                           " does not parse, left out: ", report.status().message()));
      continue;
    }
    baseline::DeviceSample s;
    s.device_id = r.device_id;
    s.model = it->second.model;
    // The capture's own build when the query gave it (LatestReportsPerBuild); captures stored before
    // schema 8 have none and count for the device's current build.
    s.build = r.build_fingerprint.empty() ? it->second.build_fingerprint : r.build_fingerprint;
    s.capture_id = r.capture_id;
    s.captured_at = r.captured_at;
    s.report = *std::move(report);
    samples.push_back(std::move(s));
  }
  return samples;
}

grpc::Status BaselineService::ImportBaseline(grpc::ServerContext* context, const v1::ImportBaselineRequest* request,
                                             v1::ImportBaselineResponse* response) {
  if (grpc::Status s = Authorize(context, "ImportBaseline"); !s.ok()) return s;
  absl::StatusOr<baseline::Baseline> parsed = baseline::ParseBaselineFile(request->file_text());
  if (!parsed.ok()) return ToGrpcStatus(parsed.status());
  absl::StatusOr<int64_t> version = baselines_.PutBaseline(parsed->name, NowRfc3339(), request->file_text());
  if (!version.ok()) return ToGrpcStatus(version.status());
  response->set_version(*version);
  response->set_name(parsed->name);
  uint32_t processes = 0;
  for (const baseline::Department& d : parsed->departments) processes += static_cast<uint32_t>(d.processes.size());
  response->set_departments(static_cast<uint32_t>(parsed->departments.size()));
  response->set_processes(processes);
  // Names no stored report has: said now, not discovered as a silent pass at the next check.
  absl::StatusOr<std::vector<storage::StoredReport>> reports = store_.LatestReportsSince("");
  if (reports.ok()) {
    std::vector<std::string> names;
    for (const storage::StoredReport& r : *reports) {
      absl::StatusOr<report::Report> report = report::ReportFromJson(r.report_json);
      if (!report.ok()) continue;
      for (const auto& [pid, p] : report->processes) names.push_back(p.name);
    }
    for (std::string& w : baseline::UnmatchedProcessNames(*parsed, names)) response->add_warnings(std::move(w));
  }
  LogLine(absl::StrCat("baseline \"", parsed->name, "\" imported as version ", *version, " from ", context->peer()));
  return grpc::Status::OK;
}

grpc::Status BaselineService::GetBaseline(grpc::ServerContext* context, const v1::GetBaselineRequest* request,
                                          v1::GetBaselineResponse* response) {
  if (grpc::Status s = Authorize(context, "GetBaseline"); !s.ok()) return s;
  if (request->version() < 0) return Invalid("--version must be 1 or more");
  absl::StatusOr<std::optional<storage::BaselineRecord>> latest = baselines_.GetBaseline(0);
  if (!latest.ok()) return ToGrpcStatus(latest.status());
  absl::StatusOr<std::optional<storage::BaselineRecord>> record =
      request->version() == 0 ? latest : baselines_.GetBaseline(request->version());
  if (!record.ok()) return ToGrpcStatus(record.status());
  if (!record->has_value()) {
    if (!latest->has_value()) return NotFound("no baseline is stored (run `memfleet baseline import FILE` first)");
    return NotFound(absl::StrCat("no baseline version ", request->version(), "; the latest is ", (*latest)->version));
  }
  response->set_version((*record)->version);
  response->set_name((*record)->name);
  response->set_imported_at((*record)->imported_at);
  response->set_file_text((*record)->raw_text);
  response->set_latest_version((*latest)->version);
  return grpc::Status::OK;
}

grpc::Status BaselineService::CheckBaseline(grpc::ServerContext* context, const v1::CheckBaselineRequest* request,
                                            v1::CheckBaselineResponse* response) {
  if (grpc::Status s = Authorize(context, "CheckBaseline"); !s.ok()) return s;
  absl::StatusOr<v1::CheckBaselineResponse> checked = Check(*request);
  if (!checked.ok()) return ToGrpcStatus(checked.status());
  *response = std::move(*checked);
  return grpc::Status::OK;
}

absl::StatusOr<v1::CheckBaselineResponse> BaselineService::Check(const v1::CheckBaselineRequest& request_in) {
  const v1::CheckBaselineRequest* request = &request_in;
  v1::CheckBaselineResponse out;
  v1::CheckBaselineResponse* response = &out;
  absl::StatusOr<baseline::Scheme> scheme =
      baseline::SchemeFromInt(request->scheme() == 0 ? 1 : static_cast<int>(request->scheme()));
  if (!scheme.ok()) return scheme.status();
  if (request->version() < 0) return absl::InvalidArgumentError("--version must be 1 or more");
  if (!request->sweep_id().empty()) {
    if (absl::Status s = CheckSweepId(request->sweep_id()); !s.ok()) return s;
  }
  absl::StatusOr<std::string> since = CheckOptionalTime("since", request->since());
  if (!since.ok()) return since.status();
  auto loaded = LoadBaseline(baselines_, request->version());
  if (!loaded.ok()) return loaded.status();

  absl::StatusOr<storage::LabelSet> labels = SelectorLabels(request->selector());
  if (!labels.ok()) return labels.status();
  absl::StatusOr<std::vector<storage::StoredReport>> reports =
      !labels->empty()              ? LabelledReports(store_, *labels, request->sweep_id(), *since, /*per_build=*/false)
      : request->sweep_id().empty() ? store_.LatestReportsSince(*since)
                                    : store_.LatestReportsOfSweep(request->sweep_id());
  if (!reports.ok()) return reports.status();
  if (reports->empty()) {
    return absl::NotFoundError(
        request->sweep_id().empty()
            ? std::string(request->since().empty() ? "no report is stored (run `memfleet sweep` first)"
                                                   : "no device has a report since " + request->since())
            : "sweep " + request->sweep_id() + " stored no capture (is the id right? see `memfleet sweep`)");
  }
  absl::StatusOr<std::vector<baseline::DeviceSample>> samples = Samples(*reports, request->selector());
  if (!samples.ok()) return samples.status();
  if (samples->empty()) return absl::NotFoundError("no stored report matches the --where terms");

  const auto& [record, parsed] = *loaded;
  baseline::CheckResult result = baseline::CheckBaseline(parsed, *scheme, *samples);
  response->set_version(record.version);
  response->set_name(record.name);
  response->set_scheme(static_cast<uint32_t>(*scheme));
  response->set_devices(result.devices);
  response->set_devices_not_applicable(result.devices_not_applicable);
  response->set_any_over(result.AnyOver());
  for (const baseline::CheckRow& r : result.rows) {
    v1::BaselineRow* row = response->add_rows();
    row->set_model(r.model);
    row->set_build(r.build);
    row->set_department(r.item.department);
    row->set_process(r.item.process);
    row->set_budget(baseline::BudgetName(r.item.budget));
    row->set_budget_kb(r.item.budget_kb);
    row->set_devices_checked(r.devices_checked);
    row->set_devices_over(r.devices_over);
    row->set_devices_unknown(r.devices_unknown);
    row->set_worst_value_kb(r.worst_value_kb);
    row->set_worst_over_kb(r.worst_over_kb);
    row->set_worst_device(r.worst_device);
    row->set_worst_capture_id(r.worst_capture_id);
    if (r.worst_app_summary) {
      for (const report::AppSummaryField& f : report::kAppSummaryFields) {
        (*row->mutable_worst_app_summary_kb())[f.name] = (*r.worst_app_summary).*(f.member);
      }
    }
  }
  for (const baseline::Unchecked& u : result.unchecked) {
    v1::UncheckedBudget* b = response->add_unchecked();
    b->set_department(u.item.department);
    b->set_process(u.item.process);
    b->set_budget(baseline::BudgetName(u.item.budget));
    b->set_budget_kb(u.item.budget_kb);
    b->set_reason(u.reason);
  }
  for (const baseline::Unbudgeted& u : result.unbudgeted) {
    v1::UnbudgetedProcess* p = response->add_unbudgeted();
    p->set_department(u.department);
    p->set_process(u.process);
    p->set_reason(u.reason);
  }
  return out;
}

grpc::Status BaselineService::Regressions(grpc::ServerContext* context, const v1::RegressionsRequest* request,
                                          v1::RegressionsResponse* response) {
  if (grpc::Status s = Authorize(context, "Regressions"); !s.ok()) return s;
  if (request->process_name().empty()) return Invalid("name the process (--process NAME)");
  for (const auto& [field, value] :
       {std::pair<const char*, const std::string*>{"process_name", &request->process_name()},
        {"build_a", &request->build_a()},
        {"build_b", &request->build_b()},
        {"model", &request->model()}}) {
    if (absl::Status s = CheckText(field, *value); !s.ok()) return ToGrpcStatus(s);
  }
  if (request->build_a().empty() != request->build_b().empty())
    return Invalid("give both --build A and --vs B, or neither");
  absl::StatusOr<std::string> since = CheckOptionalTime("since", request->since());
  if (!since.ok()) return ToGrpcStatus(since.status());
  // One sample per (device, build): a device upgraded from A to B counts for A by its last A report and
  // for B by its last B report, so a fleet that has fully moved to B can still be compared with A.
  absl::StatusOr<storage::LabelSet> labels = SelectorLabels(request->selector());
  if (!labels.ok()) return ToGrpcStatus(labels.status());
  absl::StatusOr<std::vector<storage::StoredReport>> reports =
      labels->empty() ? store_.LatestReportsPerBuild(*since)
                      : LabelledReports(store_, *labels, "", *since, /*per_build=*/true);
  if (!reports.ok()) return ToGrpcStatus(reports.status());
  absl::StatusOr<std::vector<baseline::DeviceSample>> all = Samples(*reports, request->selector());
  if (!all.ok()) return ToGrpcStatus(all.status());
  // A pre-schema-8 capture (no build of its own) falls back to the device's current build, which may also
  // be the build of its newer captures: one device, one value per build, the newest.
  std::map<std::pair<std::string, std::string>, size_t> newest_of;
  for (size_t i = 0; i < all->size(); ++i) {
    const baseline::DeviceSample& s = (*all)[i];
    auto [it, added] = newest_of.emplace(std::make_pair(s.device_id, s.build), i);
    const baseline::DeviceSample& kept = (*all)[it->second];
    if (!added && std::tie(s.captured_at, s.capture_id) > std::tie(kept.captured_at, kept.capture_id)) it->second = i;
  }
  std::vector<baseline::DeviceSample> candidates;
  for (size_t i = 0; i < all->size(); ++i) {
    baseline::DeviceSample& s = (*all)[i];
    if (newest_of[{s.device_id, s.build}] != i) continue;
    if (!request->model().empty() && s.model != request->model()) continue;
    candidates.push_back(std::move(s));
  }
  const std::string none = absl::StrCat(
      "no stored report", request->since().empty() ? "" : " since " + request->since(), " has a process named \"",
      request->process_name(), "\"", request->model().empty() ? "" : " on model " + request->model());
  absl::StatusOr<std::string> process = ResolveRegressionProcess(request->process_name(), candidates, none);
  if (!process.ok()) return ToGrpcStatus(process.status());
  std::vector<baseline::DeviceSample> samples;
  for (baseline::DeviceSample& s : candidates) {
    bool unknown = false;
    if (!baseline::ProcessFigure(s.report, *process, "total_kb", &unknown) && !unknown) continue;
    samples.push_back(std::move(s));
  }
  if (samples.empty()) return NotFound(none);
  std::string build_a = request->build_a();
  std::string build_b = request->build_b();
  if (build_a.empty()) {
    // Without --build/--vs: the newest build against the one before it, by their devices' newest report.
    std::map<std::string, std::string> newest;
    for (const baseline::DeviceSample& s : samples) newest[s.build] = std::max(newest[s.build], s.captured_at);
    std::vector<std::pair<std::string, std::string>> order;
    for (const auto& [build, at] : newest) order.emplace_back(at, build);
    std::sort(order.rbegin(), order.rend());
    if (order.size() < 2) {
      // Nothing to compare (NOT_FOUND: exit 4 "nothing to check"), not a server failure.
      return NotFound(absl::StrCat("the devices with \"", *process, "\" are all on one build (\"", order.front().second,
                                   "\"): nothing to compare; name two with --build A --vs B"));
    }
    build_b = order[0].second;
    build_a = order[1].second;
  }
  absl::StatusOr<std::vector<baseline::ModelComparison>> result =
      baseline::CompareBuilds(samples, *process, build_a, build_b);
  if (!result.ok()) return ToGrpcStatus(result.status());
  response->set_process_name(*process);
  response->set_build_a(build_a);
  response->set_build_b(build_b);
  bool any = false;
  for (const baseline::ModelComparison& mc : *result) {
    v1::ModelRegressions* m = response->add_models();
    m->set_model(mc.model);
    m->set_tier(mc.tier);
    any = any || mc.AnyFlagged();
    for (const baseline::FigureChange& f : mc.figures) {
      v1::FigureChange* out = m->add_figures();
      out->set_figure(f.figure);
      out->set_devices_a(f.devices_a);
      out->set_devices_b(f.devices_b);
      out->set_median_a_kb(f.median_a);
      out->set_median_b_kb(f.median_b);
      out->set_p90_a_kb(f.p90_a);
      out->set_p90_b_kb(f.p90_b);
      out->set_delta_kb(f.delta_kb);
      out->set_noise_kb(f.noise_kb);
      out->set_threshold_kb(f.threshold_kb);
      out->set_flagged(f.flagged);
      out->set_note(f.note);
      out->set_devices_moved(f.devices_moved);
    }
  }
  response->set_any_flagged(any);
  return grpc::Status::OK;
}

}  // namespace memfleet::server
