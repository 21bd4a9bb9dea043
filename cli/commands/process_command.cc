#include "cli/commands/process_command.h"

#include <algorithm>
#include <charconv>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "chart/figure_text.h"
#include "cli/commands/report_command.h"
#include "cli/process_breakdown_table.h"
#include "cli/time_spec.h"
#include "common/bounded_json.h"
#include "common/process_name_match.h"
#include "nlohmann/json.hpp"
#include "report/report_json.h"

namespace memfleet::cli {
namespace {

using nlohmann::json;

// The order of a process object in docs/capture-format.md; fields a newer server adds follow in name order.
const std::vector<std::string>& KnownFields() {
  static const std::vector<std::string> fields = {"name",
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
  return fields;
}

struct Match {
  std::string pid;
  const json* process = nullptr;
  const json* dumpsys = nullptr;  // may be null: an older report without the dumpsys view
};

// The breakdown objects, which get tables (and CSV columns) of their own.
bool IsBreakdownObject(const std::string& field) {
  return field == "heaps" || field == "app_summary" || field == "dma_by_exporter_kb";
}

std::vector<std::string> FieldOrder(const std::vector<Match>& matches) {
  std::vector<std::string> order = KnownFields();
  std::set<std::string> extra;
  for (const Match& m : matches) {
    for (auto it = m.process->begin(); it != m.process->end(); ++it) {
      if (IsBreakdownObject(it.key())) continue;
      if (std::find(order.begin(), order.end(), it.key()) == order.end()) extra.insert(it.key());
    }
  }
  order.insert(order.end(), extra.begin(), extra.end());
  return order;
}

const json* Find(const json* obj, const std::string& key) {
  if (obj == nullptr || !obj->is_object()) return nullptr;
  auto it = obj->find(key);
  return it == obj->end() ? nullptr : &*it;
}

// A JSON value for a table cell: kB figures with separators; absent or null is "no value" (the
// table's "-", CSV's empty cell).
std::string Cell(const json* v, bool kb, bool csv) {
  if (v == nullptr || v->is_null()) return csv ? "" : chart::kNoValue;
  if (v->is_string()) return v->get<std::string>();
  if (v->is_boolean()) return v->get<bool>() ? "true" : "false";
  if (v->is_number_integer() && kb && !csv) return FormatKb(v->get<long long>());
  return v->dump(-1, ' ', false, json::error_handler_t::replace);
}

bool IsKbField(const std::string& field) { return absl::EndsWith(field, "_kb"); }

std::vector<std::string> NamesOf(const json& processes) {
  std::vector<std::string> names;
  for (auto it = processes.begin(); it != processes.end(); ++it) {
    const json* n = Find(&it.value(), "name");
    if (n != nullptr && n->is_string()) names.push_back(n->get<std::string>());
  }
  return names;
}

}  // namespace

std::vector<std::string> ProcessNamesInReport(const std::string& report_json) {
  absl::StatusOr<json> parsed = ParseBoundedJson(report_json, JsonBounds{report::kMaxReportJsonBytes, kMaxJsonDepth});
  const json* processes = parsed.ok() ? Find(&*parsed, "processes") : nullptr;
  return processes != nullptr && processes->is_object() ? NamesOf(*processes) : std::vector<std::string>();
}

absl::StatusOr<std::string> RenderProcess(const v1::GetReportResponse& response, const std::string& typed_name,
                                          OutputFormat format, std::string* matched_name) {
  absl::StatusOr<json> parsed =
      ParseBoundedJson(response.report_json(), JsonBounds{report::kMaxReportJsonBytes, kMaxJsonDepth});
  json report = parsed.ok() ? *std::move(parsed) : json();
  const json* processes = Find(&report, "processes");
  if (processes == nullptr || !processes->is_object()) {
    return absl::DataLossError("the server's report of capture " + response.capture_id() +
                               " is not a memfleet report (no processes object)");
  }
  const json* dumpsys_procs = Find(Find(&report, "dumpsys"), "processes");
  const json* sources = Find(&report, "sources");
  absl::StatusOr<std::string> resolved =
      ResolveProcessName(typed_name, NamesOf(*processes),
                         "in the report of " + response.device_id() + " captured at " + response.captured_at());
  if (!resolved.ok()) return resolved.status();
  const std::string& process_name = *resolved;
  if (matched_name != nullptr) *matched_name = process_name;

  std::vector<Match> matches;
  for (auto it = processes->begin(); it != processes->end(); ++it) {
    const json* n = Find(&it.value(), "name");
    if (n != nullptr && n->is_string() && n->get<std::string>() == process_name) {
      matches.push_back({it.key(), &it.value(), Find(dumpsys_procs, it.key())});
    }
  }
  // Keys are decimal pids: order them numerically, not as text.
  std::sort(matches.begin(), matches.end(), [](const Match& a, const Match& b) {
    return a.pid.size() != b.pid.size() ? a.pid.size() < b.pid.size() : a.pid < b.pid;
  });
  const std::vector<std::string> fields = FieldOrder(matches);

  if (format == OutputFormat::kJson) {
    json list = json::array();
    for (const Match& m : matches) {
      json p = *m.process;
      long long pid = 0;
      auto [end, ec] = std::from_chars(m.pid.data(), m.pid.data() + m.pid.size(), pid);
      p["pid"] = ec == std::errc() && end == m.pid.data() + m.pid.size() ? json(pid) : json(m.pid);
      json d = json::object();
      for (const DumpsysCsvColumn& c : kDumpsysCsvColumns) {
        const json* v = Find(m.dumpsys, c.json_field);
        d[c.json_field] = v ? *v : json(nullptr);
      }
      p["dumpsys"] = std::move(d);
      list.push_back(std::move(p));
    }
    json out = {{"device_id", response.device_id()},
                {"capture_id", response.capture_id()},
                {"captured_at", response.captured_at()},
                {"processes", std::move(list)}};
    return out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  }
  if (format == OutputFormat::kCsv) {
    std::vector<std::string> header = {"device_id", "captured_at", "pid"};
    header.insert(header.end(), fields.begin(), fields.end());
    for (const DumpsysCsvColumn& c : kDumpsysCsvColumns) header.push_back(c.csv_column);
    for (const report::AppSummaryField& f : report::kAppSummaryFields)
      header.push_back(std::string("app_summary.") + f.name);
    std::string out = CsvRow(header);
    for (const Match& m : matches) {
      std::vector<std::string> row = {response.device_id(), response.captured_at(), m.pid};
      for (const std::string& f : fields) row.push_back(Cell(Find(m.process, f), IsKbField(f), true));
      for (const DumpsysCsvColumn& c : kDumpsysCsvColumns) {
        row.push_back(Cell(Find(m.dumpsys, c.json_field), true, true));
      }
      const json* summary = Find(m.process, "app_summary");
      for (const report::AppSummaryField& f : report::kAppSummaryFields)
        row.push_back(Cell(Find(summary, f.name), true, true));
      out += CsvRow(row);
    }
    return out;
  }
  // The breakdown tables read the typed report (an unreadable one leaves them out, the fields stay).
  absl::StatusOr<report::Report> typed = report::ReportFromJson(response.report_json());
  std::string out;
  for (const Match& m : matches) {
    out += TerminalSafe(process_name + " (pid " + m.pid + ") on " + response.device_id() + ", capture " +
                        response.capture_id() + " at " + response.captured_at()) +
           "\n";
    TextTable table({{"FIELD"}, {"VALUE", TextTable::kRight}, {"SOURCE"}});
    for (const std::string& f : fields) {
      const json* v = Find(m.process, f);
      if (v == nullptr) continue;
      const json* src = Find(sources, "processes." + m.pid + "." + f);
      table.AddRow({f, Cell(v, IsKbField(f), false), src && src->is_string() ? src->get<std::string>() : ""});
    }
    for (const DumpsysCsvColumn& c : kDumpsysCsvColumns) {
      table.AddRow({std::string("dumpsys ") + c.json_field, Cell(Find(m.dumpsys, c.json_field), true, false),
                    "dumpsys-compatible view"});
    }
    out += table.Render(2) + "\n";
    int pid = 0;
    if (typed.ok() && absl::SimpleAtoi(m.pid, &pid) && typed->processes.count(pid) != 0) {
      out += RenderProcessBreakdown(typed->processes.at(pid));
    }
  }
  return out;
}

int RunProcess(const ProcessArgs& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<OutputFormat> format = OutputFormatOf(args.common);
  if (!format.ok()) return PrintFailure(format.status(), "process", err);
  if (args.device_id.empty() || args.process_name.empty()) {
    return PrintFailure(absl::InvalidArgumentError("give a DEVICE and a process NAME, e.g. memfleet process pixel-7 "
                                                   "surfaceflinger"),
                        "process", err);
  }
  v1::GetReportRequest request;
  request.set_device_id(args.device_id);
  if (!args.at.empty()) {
    absl::StatusOr<std::string> at = ParseTimeSpec(args.at, NowUnixSeconds(args.now));
    if (!at.ok()) {
      return PrintFailure(absl::InvalidArgumentError("--at: " + std::string(at.status().message())), "process", err);
    }
    request.set_at(*at);
  }
  absl::StatusOr<std::unique_ptr<ServerClient>> client = ConnectToServer(args.common);
  if (!client.ok()) return PrintFailure(client.status(), "process", err);
  absl::StatusOr<v1::GetReportResponse> response = (*client)->GetReport(request);
  if (!response.ok()) return PrintFailure(response.status(), "process", err);
  std::string matched;
  absl::StatusOr<std::string> text = RenderProcess(*response, args.process_name, *format, &matched);
  if (!text.ok()) return PrintFailure(text.status(), "process", err);
  if (matched != args.process_name)
    err << "memfleet process: \"" << TerminalSafe(args.process_name) << "\" is \"" << TerminalSafe(matched) << "\"\n";
  out << *text;
  return kExitOk;
}

CommandLine RegisterProcessCommand(CLI::App& app) {
  auto args = std::make_shared<ProcessArgs>();
  CLI::App* cmd = AddServerCommand(&app, "process", "One process's figures in a device's latest report", args->common);
  cmd->add_option("DEVICE", args->device_id, "device id")->required();
  cmd->add_option("NAME", args->process_name, "process name as in the report")->required();
  cmd->add_option("--at", args->at, "the latest report at or before TIME: RFC 3339, or a span back such as 24h");
  return ServerCommandLine(cmd, args, &RunProcess);
}

}  // namespace memfleet::cli
