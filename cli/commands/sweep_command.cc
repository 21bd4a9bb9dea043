#include "cli/commands/sweep_command.h"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "CLI/CLI.hpp"
#include "cli/device_selector.h"
#include "cli/output_format.h"
#include "cli/sweep_progress.h"
#include "nlohmann/json.hpp"
#include "report/report_json.h"

namespace memfleet::cli {
namespace {

using nlohmann::json;

constexpr uint32_t kMaxDeadlineS = 3600;

}  // namespace

void FillFromReport(const report::Report& report, SweptDevice& device) {
  device.has_report = true;
  if (device.platform.empty()) device.platform = report::PlatformName(report.platform);
  device.total_kb = report.device.total_kb;
  device.processes_kb = report.device.processes_kb;
  device.kernel_kb = report.device.kernel_kb;
  device.static_reserved_kb = report.device.static_reserved_kb;
  const report::ProcessReport* top = nullptr;
  for (const auto& [pid, p] : report.processes) {
    // Cached processes are left out of the device total (docs/accounting.md section 3), so they are not
    // its top user.
    if (p.cached) continue;
    if (p.total_kb && (top == nullptr || *p.total_kb > *top->total_kb)) top = &p;
  }
  if (top != nullptr) {
    device.top_process = top->name;
    device.top_process_total_kb = top->total_kb;
  }
}

std::string RenderSweepResult(const std::string& sweep_id, std::vector<SweptDevice> devices, OutputFormat format) {
  std::stable_sort(devices.begin(), devices.end(), [](const SweptDevice& a, const SweptDevice& b) {
    if (a.has_report != b.has_report) return a.has_report;
    return a.total_kb.value_or(-1) > b.total_kb.value_or(-1);
  });
  if (format == OutputFormat::kJson) {
    json list = json::array();
    for (const SweptDevice& d : devices) {
      list.push_back({{"device_id", d.device_id},
                      {"model", d.model},
                      {"platform", d.platform},
                      {"state", d.state},
                      {"message", d.message},
                      {"capture_id", d.capture_id},
                      {"captured_at", d.captured_at},
                      {"has_report", d.has_report},
                      {"total_kb", KbJson(d.total_kb)},
                      {"processes_kb", KbJson(d.processes_kb)},
                      {"kernel_kb", KbJson(d.kernel_kb)},
                      {"static_reserved_kb", KbJson(d.static_reserved_kb)},
                      {"top_process", d.top_process.empty() ? json(nullptr) : json(d.top_process)},
                      {"top_process_total_kb", KbJson(d.top_process_total_kb)}});
    }
    json out = {{"sweep_id", sweep_id}, {"devices", std::move(list)}};
    return out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  }
  if (format == OutputFormat::kCsv) {
    std::string out = CsvRow({"device_id", "model", "platform", "state", "total_kb", "processes_kb", "kernel_kb",
                              "static_reserved_kb", "top_process", "top_process_total_kb", "capture_id", "message"});
    for (const SweptDevice& d : devices) {
      out += CsvRow({d.device_id, d.model, d.platform, d.state, CsvKb(d.total_kb), CsvKb(d.processes_kb),
                     CsvKb(d.kernel_kb), CsvKb(d.static_reserved_kb), d.top_process, CsvKb(d.top_process_total_kb),
                     d.capture_id, d.message});
    }
    return out;
  }
  TextTable table({{"#", TextTable::kRight},
                   {"DEVICE"},
                   {"MODEL"},
                   {"PLATFORM"},
                   {"TOTAL KB", TextTable::kRight},
                   {"PROCESSES KB", TextTable::kRight},
                   {"KERNEL KB", TextTable::kRight},
                   {"STATIC RESERVED KB", TextTable::kRight},
                   {"TOP PROCESS"},
                   {"TOP KB", TextTable::kRight}});
  std::string problems;
  size_t rank = 0;
  for (const SweptDevice& d : devices) {
    if (!d.has_report) {
      problems += "  " + d.device_id + (d.model.empty() ? "" : " (" + d.model + ")") + ": " + d.state +
                  (d.message.empty() ? "" : ": " + d.message) + "\n";
      continue;
    }
    table.AddRow({std::to_string(++rank), d.device_id, d.model.empty() ? "-" : d.model, d.platform,
                  FormatKbOrDash(d.total_kb), FormatKbOrDash(d.processes_kb), FormatKbOrDash(d.kernel_kb),
                  FormatKbOrDash(d.static_reserved_kb), d.top_process.empty() ? "-" : d.top_process,
                  FormatKbOrDash(d.top_process_total_kb)});
  }
  std::string out = "sweep " + TerminalSafe(sweep_id) + ": " + std::to_string(rank) + " of " +
                    std::to_string(devices.size()) + " devices stored a capture; ranked by total_kb\n";
  if (rank > 0) out += table.Render(2);
  if (!problems.empty()) out += "\nwithout a new report:\n" + TerminalSafeLines(problems);
  return out;
}

int RunSweep(const SweepArgs& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<OutputFormat> format = OutputFormatOf(args.common);
  if (!format.ok()) return PrintFailure(format.status(), "sweep", err);
  absl::StatusOr<v1::DeviceSelector> selector = ParseWhere(args.where);
  if (!selector.ok()) return PrintFailure(selector.status(), "sweep", err);
  if (args.deadline_s == 0 || args.deadline_s > kMaxDeadlineS) {
    return PrintFailure(absl::InvalidArgumentError("--deadline must be 1.." + std::to_string(kMaxDeadlineS) + " s"),
                        "sweep", err);
  }
  absl::StatusOr<std::unique_ptr<ServerClient>> client = ConnectToServer(args.common);
  if (!client.ok()) return PrintFailure(client.status(), "sweep", err);

  v1::SweepRequest request;
  *request.mutable_selector() = *selector;
  request.set_deadline_s(args.deadline_s);
  request.set_full_smaps(args.full_smaps);
  if (absl::Status s = AddLabelFlags(args.labels, request.mutable_labels()); !s.ok()) {
    return PrintFailure(s, "sweep", err);
  }
  SweepTracker tracker;
  bool drawn = false;
  std::string last_line;
  absl::Status status = (*client)->StartSweep(request, [&](const v1::SweepProgress& progress) {
    bool changed = tracker.Apply(progress);
    if (args.progress_tty) {
      // \r and erase-to-end-of-line: one line, redrawn in place, and only when it reads differently.
      std::string line = RenderProgressBar(tracker.tally());
      if (!drawn || line != last_line) err << "\r" << line << "\x1b[K" << std::flush;
      last_line = std::move(line);
      drawn = true;
    } else if (changed || progress.finished()) {
      err << TerminalSafe(PlainProgressLine(progress)) << "\n";
    }
  });
  if (drawn) err << "\n";
  if (!status.ok()) return PrintFailure(status, "sweep", err);
  if (tracker.devices().empty()) {
    return PrintFailure(
        absl::NotFoundError(args.where.empty() ? "no device is known to the server (start memfleet-agent on a device)"
                                               : "no device matches the --where terms (see `memfleet devices`)"),
        "sweep", err);
  }

  // Model and platform come from the device list; a failure there only leaves them blank.
  std::map<std::string, v1::DeviceSummary> summaries;
  v1::ListDevicesRequest list_request;
  *list_request.mutable_selector() = *selector;
  absl::StatusOr<v1::ListDevicesResponse> listed = (*client)->ListDevices(list_request);
  if (listed.ok()) {
    for (const v1::DeviceSummary& d : listed->devices()) summaries[d.device_id()] = d;
  }

  std::vector<SweptDevice> devices;
  size_t stored = 0;
  for (const SweepTracker::Device& d : tracker.devices()) {
    if (d.state == v1::SweepProgress::STORED) ++stored;
    SweptDevice row;
    row.device_id = d.device_id;
    row.state = SweepStateName(d.state);
    row.message = d.message;
    row.capture_id = d.capture_id;
    if (auto it = summaries.find(d.device_id); it != summaries.end()) {
      row.model = it->second.model();
      row.platform = it->second.platform();
    }
    if (d.state == v1::SweepProgress::STORED) {
      v1::GetReportRequest report_request;
      report_request.set_device_id(d.device_id);
      report_request.set_capture_id(d.capture_id);
      absl::StatusOr<v1::GetReportResponse> response = (*client)->GetReport(report_request);
      absl::StatusOr<report::Report> report = response.ok() ? report::ReportFromJson(response->report_json())
                                                            : absl::StatusOr<report::Report>(response.status());
      if (report.ok()) {
        row.captured_at = response->captured_at();
        if (row.capture_id.empty()) row.capture_id = response->capture_id();
        FillFromReport(*report, row);
      } else {
        row.message = "stored, but its report could not be read: " + std::string(report.status().message());
      }
    } else if (!IsFinalState(d.state)) {
      row.message = row.message.empty() ? "no answer before the sweep ended" : row.message;
    }
    devices.push_back(std::move(row));
  }
  const size_t total = devices.size();
  out << RenderSweepResult(tracker.sweep_id(), std::move(devices), *format);
  // A sweep is done only when every device it reached stored a capture (README "Exit codes").
  if (stored == total) return kExitOk;
  err << "memfleet sweep: " << stored << " of " << total << " devices stored a capture\n";
  return stored == 0 ? kExitNothingToCheck : kExitPartial;
}

CommandLine RegisterSweepCommand(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* cmd = AddServerCommand(
      &app, "sweep", "Capture every matching online device now, then rank them by total_kb", args->common);
  AddWhereOption(cmd, args->where);
  cmd->add_flag("--full-smaps", args->full_smaps,
                "every device reads full smaps for every process in this capture, for the heaps and App Summary "
                "of all (costs the phone more: docs/performance.md)");
  AddRepeatedOption(cmd, "--label", args->labels,
                    "KEY=VALUE put on every capture the sweep stores (repeatable): run=1234");
  cmd->add_option("--deadline", args->deadline_s, "seconds to wait for the devices' captures")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  args->progress_tty = ::isatty(STDERR_FILENO) == 1;
  return ServerCommandLine(cmd, args, &RunSweep);
}

}  // namespace memfleet::cli
