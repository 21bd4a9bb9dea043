#include "cli/commands/report_command.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "cli/device_selector.h"
#include "cli/report_table.h"
#include "cli/time_spec.h"
#include "common/bounded_json.h"
#include "nlohmann/json.hpp"
#include "report/capture_marks.h"
#include "report/report_json.h"

namespace memfleet::cli {
namespace {

using nlohmann::json;

std::string OptInt(const std::optional<int>& v) { return v ? std::to_string(*v) : std::string(); }

}  // namespace

std::string RenderProcessesCsv(const report::Report& report, int top) {
  std::vector<std::string> header = {"device_id",
                                     "captured_at",
                                     "pid",
                                     "name",
                                     "oom_score_adj",
                                     "cached",
                                     "pss_kb",
                                     "swap_pss_kb",
                                     "gfxdev_kb",
                                     "gl_kb",
                                     "dma_kb",
                                     "native_graphics_kb",
                                     "native_graphics_source",
                                     "non_graphics_kb",
                                     "graphics_dma_kb",
                                     "total_kb"};
  for (const DumpsysCsvColumn& c : kDumpsysCsvColumns) header.push_back(c.csv_column);
  std::string out = CsvRow(header);
  for (const report::ProcessReport* process : ProcessesByTotal(report, top)) {
    const report::ProcessReport& p = *process;
    out += CsvRow({report.device_id, report.captured_at, std::to_string(p.pid), p.name, OptInt(p.oom_score_adj),
                   p.cached ? "true" : "false", CsvKb(p.pss_kb), CsvKb(p.swap_pss_kb), CsvKb(p.gfxdev_kb),
                   CsvKb(p.gl_kb), CsvKb(p.dma_kb), CsvKb(p.native_graphics_kb), p.native_graphics_source,
                   CsvKb(p.non_graphics_kb), CsvKb(p.graphics_dma_kb), CsvKb(p.total_kb), CsvKb(p.gl_mtrack_kb),
                   CsvKb(p.egl_mtrack_kb), CsvKb(p.dumpsys_total_pss_kb)});
  }
  return out;
}

int RunReport(const ReportArgs& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<OutputFormat> format = OutputFormatOf(args.common);
  if (!format.ok()) return PrintFailure(format.status(), "report", err);
  if (args.device_id.empty()) {
    return PrintFailure(absl::InvalidArgumentError("give a DEVICE (see `memfleet devices`)"), "report", err);
  }
  v1::GetReportRequest request;
  request.set_device_id(args.device_id);
  request.set_capture_id(args.capture_id);
  if (absl::Status s = AddLabelFlags(args.labels, request.mutable_labels()); !s.ok()) {
    return PrintFailure(s, "report", err);
  }
  if (absl::Status s = AddLabelFlags(args.agent_labels, request.mutable_agent_labels(), "--agent-label"); !s.ok()) {
    return PrintFailure(s, "report", err);
  }
  if (!args.at.empty()) {
    absl::StatusOr<std::string> at = ParseTimeSpec(args.at, NowUnixSeconds(args.now));
    if (!at.ok())
      return PrintFailure(absl::InvalidArgumentError("--at: " + std::string(at.status().message())), "report", err);
    request.set_at(*at);
  }
  absl::StatusOr<std::unique_ptr<ServerClient>> client = ConnectToServer(args.common);
  if (!client.ok()) return PrintFailure(client.status(), "report", err);
  absl::StatusOr<v1::GetReportResponse> response = (*client)->GetReport(request);
  if (!response.ok()) return PrintFailure(response.status(), "report", err);

  if (*format == OutputFormat::kJson) {
    // Re-indent to match `memfleet account --json`; pass the text through untouched if it is not JSON, or
    // too deep to re-indent without exhausting the stack.
    absl::StatusOr<json> parsed =
        ParseBoundedJson(response->report_json(), JsonBounds{report::kMaxReportJsonBytes, kMaxJsonDepth});
    // The stored capture's id and labels join the report object (`memfleet account --json`'s, with what
    // only a stored capture has): a script can then name the capture it read (`report --capture ID`). Its
    // sweep's id is "sweep_id" (null for a periodic capture, as `trend --json` says it), its labels
    // "labels" and its agent's "agent_labels", each only when there are some.
    if (parsed.ok() && parsed->is_object()) {
      (*parsed)["capture_id"] = response->capture_id();
      (*parsed)["sweep_id"] = response->sweep_id().empty() ? json(nullptr) : json(response->sweep_id());
      for (const auto& [name, labels] :
           {std::make_pair("labels", &response->labels()), std::make_pair("agent_labels", &response->agent_labels())}) {
        if (labels->empty()) continue;
        json& object = (*parsed)[name] = json::object();
        for (const v1::Label& label : *labels) object[label.key()] = label.value();
      }
    }
    out << (parsed.ok() ? parsed->dump(1, ' ', false, json::error_handler_t::replace) : response->report_json())
        << "\n";
    return kExitOk;
  }
  absl::StatusOr<report::Report> report = report::ReportFromJson(response->report_json());
  if (!report.ok()) {
    return PrintFailure(absl::DataLossError("the server's report of capture " + response->capture_id() +
                                            " is not readable: " + std::string(report.status().message())),
                        "report", err);
  }
  if (report->device_id.empty()) report->device_id = response->device_id();
  if (report->captured_at.empty()) report->captured_at = response->captured_at();
  if (*format == OutputFormat::kCsv) {
    out << RenderProcessesCsv(*report, args.top.value_or(0));
    return kExitOk;
  }
  out << TerminalSafe("capture " + response->capture_id() + " of " + response->device_id() + " at " +
                      response->captured_at() + " (from " + (*client)->address() + ")")
      << "\n";
  // The tier stored with it (docs/accounting.md section 9): figures of the two tiers do not compare.
  out << "tier " << (response->tier().empty() ? std::string("unknown") : TerminalSafe(response->tier())) << "\n";
  // Its sweep and labels a line each, worded as the dashboard and `trend` mark a capture.
  for (const report::CaptureMark& mark : report::CaptureMarks(response->sweep_id(), LabelMapOf(response->labels()),
                                                              LabelMapOf(response->agent_labels()))) {
    out << TerminalSafe(mark.text) << "\n";
  }
  TableOptions table;
  table.top_processes = args.top.value_or(table.top_processes);
  out << RenderReportTable(*report, table);
  return kExitOk;
}

CommandLine RegisterReportCommand(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = AddServerCommand(&app, "report", "A device's stored report (the latest, or at a time)", args->common);
  cmd->add_option("DEVICE", args->device_id, "device id (see `memfleet devices`)")->required();
  cmd->add_option("--at", args->at, "the latest report at or before TIME: RFC 3339, or a span back such as 24h");
  cmd->add_option("--capture", args->capture_id, "one exact capture id (wins over --at, --label and --agent-label)");
  AddRepeatedOption(cmd, "--label", args->labels,
                    "KEY=VALUE: the latest capture carrying the label from its sweep (repeat to AND): run=1234");
  AddRepeatedOption(cmd, "--agent-label", args->agent_labels,
                    "KEY=VALUE: ... carrying the label from its agent's --label (repeat to AND): rack=7");
  cmd->add_option("--top", args->top,
                  "processes in the table and CSV, largest total first "
                  "(default: 20 in the table, all in CSV; 0 = all)");
  return ServerCommandLine(cmd, args, &RunReport);
}

}  // namespace memfleet::cli
