#include "cli/commands/baseline_command.h"

#include <cmath>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "chart/figure_text.h"
#include "cli/device_selector.h"
#include "cli/time_spec.h"
#include "nlohmann/json.hpp"
#include "baseline/baseline_check.h"
#include "baseline/baseline_file.h"
#include "report/report.h"

namespace memfleet::cli {
namespace {

using nlohmann::json;

std::string Dump(const json& j) { return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n"; }

std::string Signed(int64_t kb) { return kb > 0 ? "+" + FormatKb(kb) : FormatKb(kb); }

// "java heap 20.9 MB, native heap 30.1 MB, ..." in the App Summary's order; "" without one.
std::string SummaryWords(const v1::BaselineRow& row) {
  std::string out;
  for (const report::AppSummaryField& f : report::kAppSummaryFields) {
    auto it = row.worst_app_summary_kb().find(f.name);
    if (it == row.worst_app_summary_kb().end()) continue;
    absl::StrAppend(&out, out.empty() ? "" : ", ", absl::AsciiStrToLower(f.label), " ", FormatKbHuman(it->second));
  }
  return out;
}

json SummaryJson(const v1::BaselineRow& row) {
  if (row.worst_app_summary_kb().empty()) return nullptr;
  json out = json::object();
  for (const auto& [field, kb] : row.worst_app_summary_kb()) out[field] = kb;
  return out;
}

std::string Round(double kb) { return FormatKb(static_cast<long long>(std::llround(kb))); }

std::string ItemName(const v1::BaselineRow& r) {
  return r.process().empty() ? absl::StrCat("[department ", r.department(), "]") : r.process();
}

}  // namespace

int RunBaselineImport(const BaselineImportArgs& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<OutputFormat> format = OutputFormatOf(args.common);
  if (!format.ok()) return PrintFailure(format.status(), "baseline import", err);
  std::ifstream in(args.file, std::ios::binary);
  if (!in) {
    return PrintFailure(absl::InvalidArgumentError("cannot read " + args.file), "baseline import", err);
  }
  std::ostringstream text;
  text << in.rdbuf();
  // Validate here first: the same rules as the server, and no round trip for a typo.
  absl::StatusOr<baseline::Baseline> parsed = baseline::ParseBaselineFile(text.str());
  if (!parsed.ok()) {
    err << "memfleet baseline import: " << args.file << ": " << parsed.status().message() << "\n";
    return kExitUsage;
  }
  absl::StatusOr<std::unique_ptr<ServerClient>> client = ConnectToServer(args.common);
  if (!client.ok()) return PrintFailure(client.status(), "baseline import", err);
  v1::ImportBaselineRequest request;
  request.set_file_text(text.str());
  absl::StatusOr<v1::ImportBaselineResponse> response = (*client)->ImportBaseline(request);
  if (!response.ok()) return PrintFailure(response.status(), "baseline import", err);
  if (*format == OutputFormat::kJson) {
    out << Dump({{"version", response->version()},
                 {"name", response->name()},
                 {"departments", response->departments()},
                 {"processes", response->processes()},
                 {"warnings", std::vector<std::string>(response->warnings().begin(), response->warnings().end())}});
  } else {
    out << "imported \"" << TerminalSafe(response->name()) << "\" as baseline version " << response->version() << " ("
        << response->departments() << " departments, " << response->processes() << " processes)\n";
  }
  // On stderr in every format: a name the reports do not have is a budget `check` cannot check.
  for (const std::string& warning : response->warnings()) {
    err << "memfleet baseline import: warning: " << TerminalSafe(warning) << "\n";
  }
  return kExitOk;
}

int RunBaselineShow(const BaselineShowArgs& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<OutputFormat> format = OutputFormatOf(args.common);
  if (!format.ok()) return PrintFailure(format.status(), "baseline show", err);
  if (args.version < 0)
    return PrintFailure(absl::InvalidArgumentError("--version must be 1 or more"), "baseline show", err);
  absl::StatusOr<std::unique_ptr<ServerClient>> client = ConnectToServer(args.common);
  if (!client.ok()) return PrintFailure(client.status(), "baseline show", err);
  v1::GetBaselineRequest request;
  request.set_version(args.version);
  absl::StatusOr<v1::GetBaselineResponse> response = (*client)->GetBaseline(request);
  if (!response.ok()) return PrintFailure(response.status(), "baseline show", err);
  absl::StatusOr<baseline::Baseline> parsed = baseline::ParseBaselineFile(response->file_text());
  if (*format == OutputFormat::kJson) {
    json j = {{"version", response->version()},
              {"latest_version", response->latest_version()},
              {"name", response->name()},
              {"imported_at", response->imported_at()}};
    j["baseline"] = parsed.ok() ? json::parse(baseline::BaselineToJson(*parsed)) : json(nullptr);
    j["file_text"] = response->file_text();
    out << Dump(j);
    return kExitOk;
  }
  out << "baseline version " << response->version() << " of " << response->latest_version() << ": \""
      << TerminalSafe(response->name()) << "\", imported " << TerminalSafe(response->imported_at()) << "\n";
  if (!parsed.ok()) {
    out << "(the stored file no longer validates: " << TerminalSafe(std::string(parsed.status().message())) << ")\n";
    return kExitOk;
  }
  if (!parsed->version.empty()) out << "  version label: " << TerminalSafe(parsed->version) << "\n";
  if (!parsed->reference_build.empty()) out << "  reference build: " << TerminalSafe(parsed->reference_build) << "\n";
  auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
    return s.empty() ? std::string("all") : s;
  };
  out << "  applies to models: " << TerminalSafe(list(parsed->models))
      << "; builds: " << TerminalSafe(list(parsed->builds)) << "\n\n";
  TextTable t({{"DEPARTMENT"},
               {"STATUS"},
               {"PROCESS"},
               {"SR"},
               {"SR STATUS"},
               {"GRAPHICS_DMA", TextTable::kRight},
               {"NON_GRAPHICS", TextTable::kRight},
               {"TARGET_TOTAL", TextTable::kRight}});
  for (const baseline::Department& d : parsed->departments) {
    t.AddRow({d.name, baseline::MetStatusName(d.status), "(whole department)", "", "", "", "",
              FormatKbOrDash(d.target_total_kb)});
    for (const baseline::ProcessBaseline& p : d.processes) {
      t.AddRow({"", "", p.name, p.sr ? "yes" : "", p.status ? baseline::MetStatusName(*p.status) : "",
                FormatKbOrDash(p.graphics_dma_kb), FormatKbOrDash(p.non_graphics_kb),
                FormatKbOrDash(p.target_total_kb)});
    }
  }
  out << t.Render(2);
  return kExitOk;
}

absl::StatusOr<v1::CheckBaselineRequest> MakeCheckRequest(const BaselineCheckArgs& args) {
  if (args.scheme != 1 && args.scheme != 2) {
    return absl::InvalidArgumentError(absl::StrCat("--scheme ", args.scheme, ": use 1 or 2 (docs/baselines.md)"));
  }
  if (!args.sweep_id.empty() && !args.since.empty()) {
    return absl::InvalidArgumentError("give --sweep ID or --since SPAN, not both");
  }
  if (args.version < 0) return absl::InvalidArgumentError("--version must be 1 or more");
  v1::CheckBaselineRequest request;
  request.set_scheme(static_cast<uint32_t>(args.scheme));
  request.set_sweep_id(args.sweep_id);
  request.set_version(args.version);
  if (!args.since.empty()) {
    absl::StatusOr<std::string> since = ParseTimeSpec(args.since, NowUnixSeconds(args.now));
    if (!since.ok()) return absl::InvalidArgumentError(absl::StrCat("--since: ", since.status().message()));
    request.set_since(*since);
  }
  absl::StatusOr<v1::DeviceSelector> selector = ParseWhere(args.where);
  if (!selector.ok()) return selector.status();
  *request.mutable_selector() = *selector;
  return request;
}

std::string RenderCheck(const v1::CheckBaselineResponse& r, OutputFormat format) {
  if (format == OutputFormat::kJson) {
    json rows = json::array();
    for (const v1::BaselineRow& row : r.rows()) {
      rows.push_back({{"model", row.model()},
                      {"build", row.build()},
                      {"department", row.department()},
                      {"process", row.process().empty() ? json(nullptr) : json(row.process())},
                      {"budget", row.budget()},
                      {"budget_kb", row.budget_kb()},
                      {"over", row.devices_over() > 0},
                      {"devices_checked", row.devices_checked()},
                      {"devices_over", row.devices_over()},
                      {"devices_unknown", row.devices_unknown()},
                      {"worst_value_kb", row.worst_value_kb()},
                      {"worst_over_kb", row.worst_over_kb()},
                      {"worst_device", row.worst_device()},
                      {"worst_capture_id", row.worst_capture_id()},
                      {"worst_app_summary", SummaryJson(row)}});
    }
    json unchecked = json::array();
    for (const v1::UncheckedBudget& u : r.unchecked()) {
      unchecked.push_back({{"department", u.department()},
                           {"process", u.process().empty() ? json(nullptr) : json(u.process())},
                           {"budget", u.budget()},
                           {"budget_kb", u.budget_kb()},
                           {"reason", u.reason()}});
    }
    json none = json::array();
    for (const v1::UnbudgetedProcess& u : r.unbudgeted()) {
      none.push_back({{"department", u.department()}, {"process", u.process()}, {"reason", u.reason()}});
    }
    return Dump({{"baseline_version", r.version()},
                 {"baseline_name", r.name()},
                 {"scheme", r.scheme()},
                 {"devices", r.devices()},
                 {"devices_not_applicable", r.devices_not_applicable()},
                 {"any_over", r.any_over()},
                 {"rows", std::move(rows)},
                 {"unchecked", std::move(unchecked)},
                 {"unbudgeted", std::move(none)}});
  }
  if (format == OutputFormat::kCsv) {
    std::string out = CsvRow({"model", "build", "department", "process", "budget", "budget_kb", "devices_checked",
                              "devices_over", "worst_value_kb", "worst_over_kb", "worst_device"});
    for (const v1::BaselineRow& row : r.rows()) {
      out += CsvRow({row.model(), row.build(), row.department(), row.process(), row.budget(),
                     std::to_string(row.budget_kb()), std::to_string(row.devices_checked()),
                     std::to_string(row.devices_over()), std::to_string(row.worst_value_kb()),
                     std::to_string(row.worst_over_kb()), row.worst_device()});
    }
    return out;
  }
  std::string out = absl::StrCat("baseline \"", r.name(), "\" (version ", r.version(), "), scheme ", r.scheme(), ": ",
                                 r.devices(), " devices checked");
  if (r.devices_not_applicable() > 0) absl::StrAppend(&out, ", ", r.devices_not_applicable(), " not covered by it");
  out += "\n";
  TextTable over({{"MODEL"},
                  {"BUILD"},
                  {"PROCESS / DEPARTMENT"},
                  {"BUDGET"},
                  {"LIMIT", TextTable::kRight},
                  {"OVER ON", TextTable::kRight},
                  {"WORST", TextTable::kRight},
                  {"BY", TextTable::kRight},
                  {"WORST DEVICE"}});
  size_t within = 0;
  std::string breakdowns;
  for (const v1::BaselineRow& row : r.rows()) {
    if (row.devices_over() == 0) {
      ++within;
      continue;
    }
    if (const std::string words = SummaryWords(row); !words.empty()) {
      absl::StrAppend(&breakdowns, "  ", ItemName(row), " on ", row.worst_device(), ": ", words, "\n");
    }
    over.AddRow({TextOrDash(row.model()), TextOrDash(row.build()), ItemName(row), row.budget(),
                 FormatKb(row.budget_kb()),
                 chart::PartOfCountWithUnknown(row.devices_over(), row.devices_checked(), row.devices_unknown()),
                 FormatKb(row.worst_value_kb()), Signed(row.worst_over_kb()), row.worst_device()});
  }
  const std::string unchecked_note =
      r.unchecked_size() == 0 ? "" : absl::StrCat(", ", r.unchecked_size(), " not checked");
  if (over.row_count() == 0) {
    out += r.unchecked_size() == 0 ? absl::StrCat("all within budget (", within, " budgets checked)\n")
                                   : absl::StrCat(within, " budgets checked, all within", unchecked_note, "\n");
  } else {
    out += absl::StrCat(over.row_count(), " over budget (kB), ", within, " within", unchecked_note, ":\n") +
           over.Render(2);
    if (!breakdowns.empty()) out += "where the memory is on the worst device (App Summary):\n" + breakdowns;
  }
  if (r.unchecked_size() > 0) {
    out += absl::StrCat("\nnot checked (", r.unchecked_size(), "):\n");
    for (const v1::UncheckedBudget& u : r.unchecked()) {
      out += absl::StrCat("  ", u.process().empty() ? absl::StrCat("[department ", u.department(), "]") : u.process(),
                          " ", u.budget(), ": ", u.reason(), "\n");
    }
  }
  if (r.unbudgeted_size() > 0) {
    out += absl::StrCat("\nno budget under scheme ", r.scheme(), ":\n");
    for (const v1::UnbudgetedProcess& u : r.unbudgeted()) {
      out += absl::StrCat("  ", u.process(), " (", u.department(), "): ", u.reason(), "\n");
    }
  }
  return TerminalSafeLines(out);  // device and baseline text
}

int RunBaselineCheck(const BaselineCheckArgs& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<OutputFormat> format = OutputFormatOf(args.common);
  if (!format.ok()) return PrintFailure(format.status(), "baseline check", err);
  absl::StatusOr<v1::CheckBaselineRequest> request = MakeCheckRequest(args);
  if (!request.ok()) return PrintFailure(request.status(), "baseline check", err);
  absl::StatusOr<std::unique_ptr<ServerClient>> client = ConnectToServer(args.common);
  if (!client.ok()) return PrintFailure(client.status(), "baseline check", err);
  absl::StatusOr<v1::CheckBaselineResponse> response = (*client)->CheckBaseline(*request);
  if (!response.ok()) return PrintFailure(response.status(), "baseline check", err);
  out << RenderCheck(*response, *format);
  if (response->any_over()) return kExitOverLimit;
  if (response->unchecked_size() == 0 || args.allow_unchecked) return kExitOk;
  // Budgets the baseline asks for were not checked: not a pass (README "Exit codes").
  const bool none_checked = response->rows_size() == 0;
  err << "memfleet baseline check: " << response->unchecked_size() << " budget"
      << (response->unchecked_size() == 1 ? "" : "s") << " could not be checked"
      << (none_checked ? " (none could)" : "") << "; --allow-unchecked to pass anyway\n";
  return none_checked ? kExitNothingToCheck : kExitPartial;
}

namespace {

// Which parts of the App Summary moved beyond the noise, as a sentence each: "native heap +12.4 MB on 5
// of 6 devices" (the devices of build B beyond build A's median by more than the threshold).
std::string MovedParts(const v1::ModelRegressions& m) {
  std::string out;
  for (const v1::FigureChange& f : m.figures()) {
    const std::string_view name = f.figure();
    constexpr std::string_view kPrefix = "app_summary.";
    if (!f.flagged() || name.substr(0, kPrefix.size()) != kPrefix) continue;
    const report::AppSummaryField* field = report::FindAppSummaryField(name.substr(kPrefix.size()));
    if (field == nullptr) continue;
    const long long delta = std::llround(f.delta_kb());
    absl::StrAppend(&out, "  ", absl::AsciiStrToLower(field->label), " ", delta > 0 ? "+" : "-",
                    FormatKbHuman(std::llabs(delta)), " on ", f.devices_moved(), " of ", f.devices_b(), " devices\n");
  }
  return out.empty() ? out : "  which part moved (App Summary):\n" + out;
}

}  // namespace

std::string RenderRegressions(const v1::RegressionsResponse& r, OutputFormat format) {
  if (format == OutputFormat::kJson) {
    json models = json::array();
    for (const v1::ModelRegressions& m : r.models()) {
      json figures = json::array();
      for (const v1::FigureChange& f : m.figures()) {
        figures.push_back({{"figure", f.figure()},
                           {"devices_a", f.devices_a()},
                           {"devices_b", f.devices_b()},
                           {"median_a_kb", f.median_a_kb()},
                           {"median_b_kb", f.median_b_kb()},
                           {"p90_a_kb", f.p90_a_kb()},
                           {"p90_b_kb", f.p90_b_kb()},
                           {"delta_kb", f.delta_kb()},
                           {"noise_kb", f.noise_kb()},
                           {"threshold_kb", f.threshold_kb()},
                           {"flagged", f.flagged()},
                           {"note", f.note()},
                           {"devices_moved", f.devices_moved()}});
      }
      models.push_back({{"model", m.model()}, {"tier", m.tier()}, {"figures", std::move(figures)}});
    }
    return Dump({{"process", r.process_name()},
                 {"build_a", r.build_a()},
                 {"build_b", r.build_b()},
                 {"any_flagged", r.any_flagged()},
                 {"models", std::move(models)}});
  }
  std::string out = absl::StrCat(r.process_name(), ": build ", r.build_b(), " against ", r.build_a(),
                                 " (medians across devices; flagged when |change| > max(3 x noise, 1024 kB))\n");
  for (const v1::ModelRegressions& m : r.models()) {
    out += absl::StrCat("\nmodel ", TextOrDash(m.model()), ", ", TextOrDash(m.tier()), " tier\n");
    TextTable t({{"FIGURE"},
                 {"DEVICES A/B", TextTable::kRight},
                 {"MEDIAN A", TextTable::kRight},
                 {"MEDIAN B", TextTable::kRight},
                 {"P90 A", TextTable::kRight},
                 {"P90 B", TextTable::kRight},
                 {"CHANGE", TextTable::kRight},
                 {"NOISE", TextTable::kRight},
                 {"VERDICT"}});
    for (const v1::FigureChange& f : m.figures()) {
      std::string verdict = !f.note().empty() ? f.note()
                            : f.flagged()     ? (f.delta_kb() > 0 ? "REGRESSION" : "improvement")
                                              : "within noise";
      t.AddRow({f.figure(), absl::StrCat(f.devices_a(), "/", f.devices_b()), Round(f.median_a_kb()),
                Round(f.median_b_kb()), FormatKb(f.p90_a_kb()), FormatKb(f.p90_b_kb()),
                (f.delta_kb() > 0 ? "+" : "") + Round(f.delta_kb()), Round(f.noise_kb()), verdict});
    }
    out += t.Render(2);
    out += MovedParts(m);
  }
  return TerminalSafeLines(out);  // device and baseline text
}

int RunRegressions(const RegressionsArgs& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<OutputFormat> format = OutputFormatOf(args.common);
  if (!format.ok()) return PrintFailure(format.status(), "regressions", err);
  if (args.process_name.empty()) {
    return PrintFailure(absl::InvalidArgumentError("name the process: --process NAME"), "regressions", err);
  }
  if (args.build_a.empty() != args.build_b.empty()) {
    return PrintFailure(absl::InvalidArgumentError("give both --build A and --vs B, or neither"), "regressions", err);
  }
  absl::StatusOr<v1::DeviceSelector> selector = ParseWhere(args.where);
  if (!selector.ok()) return PrintFailure(selector.status(), "regressions", err);
  absl::StatusOr<std::unique_ptr<ServerClient>> client = ConnectToServer(args.common);
  if (!client.ok()) return PrintFailure(client.status(), "regressions", err);
  v1::RegressionsRequest request;
  request.set_process_name(args.process_name);
  request.set_build_a(args.build_a);
  request.set_build_b(args.build_b);
  request.set_model(args.model);
  if (!args.since.empty()) {
    absl::StatusOr<std::string> since = ParseTimeSpec(args.since, NowUnixSeconds(args.now));
    if (!since.ok()) {
      return PrintFailure(absl::InvalidArgumentError(absl::StrCat("--since: ", since.status().message())),
                          "regressions", err);
    }
    request.set_since(*since);
  }
  *request.mutable_selector() = *selector;
  absl::StatusOr<v1::RegressionsResponse> response = (*client)->Regressions(request);
  if (!response.ok()) return PrintFailure(response.status(), "regressions", err);
  out << RenderRegressions(*response, *format);
  return response->any_flagged() ? kExitOverLimit : kExitOk;
}

int RunFleetWithBaseline(const FleetArgs& args, int scheme_number, std::ostream& out, std::ostream& err) {
  absl::StatusOr<OutputFormat> format = OutputFormatOf(args.common);
  if (!format.ok()) return PrintFailure(format.status(), "fleet", err);
  absl::StatusOr<baseline::Scheme> scheme = baseline::SchemeFromInt(scheme_number);
  if (!scheme.ok()) return PrintFailure(scheme.status(), "fleet", err);
  const std::string figure = args.metric.substr(args.metric.find('.') + 1);
  if (args.metric.rfind("process.", 0) != 0 ||
      (figure != "graphics_dma_kb" && figure != "non_graphics_kb" && figure != "total_kb")) {
    return PrintFailure(
        absl::InvalidArgumentError("--baseline compares a budgeted figure: --metric process.graphics_dma_kb, "
                                   "process.non_graphics_kb or process.total_kb (target total) with --process NAME"),
        "fleet", err);
  }
  absl::StatusOr<v1::FleetRequest> request = MakeFleetRequest(args);
  if (!request.ok()) return PrintFailure(request.status(), "fleet", err);
  absl::StatusOr<std::unique_ptr<ServerClient>> client = ConnectToServer(args.common);
  if (!client.ok()) return PrintFailure(client.status(), "fleet", err);
  absl::StatusOr<v1::GetBaselineResponse> stored = (*client)->GetBaseline(v1::GetBaselineRequest());
  if (!stored.ok()) return PrintFailure(stored.status(), "fleet", err);
  absl::StatusOr<baseline::Baseline> parsed = baseline::ParseBaselineFile(stored->file_text());
  if (!parsed.ok()) return PrintFailure(parsed.status(), "fleet", err);
  absl::StatusOr<v1::FleetResponse> response = (*client)->GetFleet(*request);
  if (!response.ok()) return PrintFailure(response.status(), "fleet", err);
  // The name as the server resolved it ("surfaceflinger" -> "/system/bin/surfaceflinger"): the baseline
  // names processes as the reports do.
  const std::string process = response->process_name().empty() ? args.process_name : response->process_name();

  bool budgeted = false;  // plain flag + value: GCC 12 misreads std::optional here (maybe-uninitialized)
  int64_t budget_value = 0;
  std::string why = "not in the baseline";
  baseline::Assignments a = baseline::AssignBudgets(*parsed, *scheme);
  for (const baseline::Assignment& x : a.budgets) {
    if (x.process == process && baseline::BudgetFigureName(x.budget) == figure) {
      budgeted = true;
      budget_value = x.budget_kb;
    }
  }
  for (const baseline::Unbudgeted& u : a.none) {
    if (u.process == process) why = u.reason;
  }
  if (!budgeted && parsed->DepartmentOf(process) != nullptr && why == "not in the baseline") {
    why = absl::StrCat("scheme ", scheme_number, " gives it no ", figure, " budget");
  }
  json rows = json::array();
  TextTable t({{"DEVICE"},
               {"MODEL"},
               {"CAPTURED"},
               {"VALUE", TextTable::kRight},
               {"BUDGET", TextTable::kRight},
               {"OVER", TextTable::kRight}});
  for (const v1::FleetRow& r : response->rows()) {
    // As `baseline check` decides it: the device's model and current build against applies_to.
    const bool applies = parsed->AppliesTo(r.model(), r.build());
    const bool has_value = r.value_known();
    const bool has_budget = applies && budgeted;
    const int64_t budget_kb = has_budget ? budget_value : 0;
    const int64_t over_kb = r.value_kb() - budget_kb;
    rows.push_back({{"device_id", r.device_id()},
                    {"model", r.model()},
                    {"build", r.build()},
                    {"captured_at", r.captured_at()},
                    {"applies", applies},
                    {"value_kb", has_value ? json(r.value_kb()) : json(nullptr)},
                    {"budget_kb", has_budget ? json(budget_kb) : json(nullptr)},
                    {"over_kb", has_value && has_budget ? json(over_kb) : json(nullptr)}});
    t.AddRow({r.device_id(), r.model(), r.captured_at(), has_value ? FormatKb(r.value_kb()) : "-",
              has_budget ? FormatKb(budget_kb) : "-", has_value && has_budget ? Signed(over_kb) : "-"});
  }
  if (*format == OutputFormat::kJson) {
    out << Dump({{"metric", args.metric},
                 {"process", process},
                 {"scheme", scheme_number},
                 {"baseline_version", stored->version()},
                 {"budget_kb", budgeted ? json(budget_value) : json(nullptr)},
                 {"no_budget_reason", budgeted ? json(nullptr) : json(why)},
                 {"rows", std::move(rows)}});
    return kExitOk;
  }
  out << TerminalSafe(args.metric + " of " + process) << " against baseline \"" << TerminalSafe(stored->name())
      << "\" (version " << stored->version() << ", scheme " << scheme_number
      << "): " << (budgeted ? "budget " + FormatKb(budget_value) + " kB" : "no budget (" + why + ")") << "\n";
  out << t.Render(2);
  return kExitOk;
}

std::vector<CommandLine> RegisterBaselineCommands(CLI::App& app) {
  CLI::App* baseline =
      app.add_subcommand("baseline", "Memory baselines: import, show, check stored reports against them");
  baseline->require_subcommand(1);

  auto import_args = std::make_shared<BaselineImportArgs>();
  CLI::App* import_cmd = AddServerCommand(
      baseline, "import", "Validate a baseline file and store it as a new version (admin)", import_args->common);
  import_cmd->add_option("FILE", import_args->file, "baseline file (JSON, docs/baselines.md)")->required();

  auto show_args = std::make_shared<BaselineShowArgs>();
  CLI::App* show_cmd =
      AddServerCommand(baseline, "show", "A stored baseline (the latest, or --version N)", show_args->common);
  show_cmd->add_option("--version", show_args->version, "baseline version (default: the latest)");

  auto check_args = std::make_shared<BaselineCheckArgs>();
  CLI::App* check_cmd = AddServerCommand(
      baseline, "check",
      "Stored reports against the baseline: what is over budget, by how much, on how many devices (exit 3)",
      check_args->common);
  AddWhereOption(check_cmd, check_args->where);
  check_cmd->add_option("--scheme", check_args->scheme, "which budgets apply: 1 or 2 (docs/accounting.md section 6)")
      ->capture_default_str();
  check_cmd->add_option("--sweep", check_args->sweep_id, "the captures of one sweep");
  check_cmd->add_option("--since", check_args->since,
                        "devices whose latest report is at most this old (24h, 7d) or since an RFC 3339 time");
  check_cmd->add_option("--version", check_args->version, "baseline version (default: the latest)");
  check_cmd->add_flag("--allow-unchecked", check_args->allow_unchecked,
                      "pass (exit 0) even when budgets could not be checked: no such process, unknown figure");

  auto regressions_args = std::make_shared<RegressionsArgs>();
  CLI::App* regressions_cmd = AddServerCommand(
      &app, "regressions",
      "A process's figures across a model's devices, build A against build B: changes beyond the noise (exit 3)",
      regressions_args->common);
  AddWhereOption(regressions_cmd, regressions_args->where);
  regressions_cmd->add_option("--process", regressions_args->process_name, "process name as in the report")->required();
  regressions_cmd->add_option("--build", regressions_args->build_a, "the build compared against (A)");
  regressions_cmd->add_option("--vs", regressions_args->build_b, "the build under test (B)");
  regressions_cmd->add_option("--model", regressions_args->model, "only this device model");
  regressions_cmd->add_option("--since", regressions_args->since,
                              "only reports since then: 7d, 24h, 30m or an RFC 3339 time (default: all)");

  return {ServerCommandLine(import_cmd, import_args, &RunBaselineImport),
          ServerCommandLine(show_cmd, show_args, &RunBaselineShow),
          ServerCommandLine(check_cmd, check_args, &RunBaselineCheck),
          ServerCommandLine(regressions_cmd, regressions_args, &RunRegressions)};
}

}  // namespace memfleet::cli
