#include "cli/commands/trend_command.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/commands/process_command.h"
#include "chart/figure_text.h"
#include "cli/output_format.h"
#include "common/label_text.h"
#include "common/process_name_match.h"
#include "chart/chart.h"
#include "cli/device_selector.h"
#include "cli/time_spec.h"
#include "nlohmann/json.hpp"
#include "report/capture_marks.h"

namespace memfleet::cli {
namespace {

using chart::ChartOptions;
using chart::ChartPoint;
using chart::RenderSvgLineChart;
using chart::Sparkline;
using nlohmann::json;

std::string MetricName(const std::string& metric) {
  if (absl::StartsWith(metric, "process.")) return metric.substr(8);
  return absl::StartsWith(metric, "device.") ? metric.substr(7) : metric;
}

bool ValidMetric(const std::string& metric) {
  if (metric.empty()) return false;
  // Figure names, and the dotted ones of the breakdown: app_summary.native_heap_kb, heaps.dalvik.pss_kb.
  return std::all_of(metric.begin(), metric.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.'; });
}

std::optional<int64_t> ValueOf(const v1::HistoryPoint& p) {
  return p.value_known() ? std::optional<int64_t>(p.value_kb()) : std::nullopt;
}

std::vector<v1::HistoryPoint> Sorted(const v1::ProcessHistoryResponse& history) {
  std::vector<v1::HistoryPoint> points(history.points().begin(), history.points().end());
  // RFC 3339 UTC strings order as times; the server sends them in order, this only makes sure.
  std::stable_sort(points.begin(), points.end(), [](const v1::HistoryPoint& a, const v1::HistoryPoint& b) {
    return a.captured_at() < b.captured_at();
  });
  return points;
}

struct Summary {
  std::optional<int64_t> min, max, last;
  size_t unknown = 0;
};

Summary Summarize(const std::vector<v1::HistoryPoint>& points) {
  Summary s;
  for (const v1::HistoryPoint& p : points) {
    std::optional<int64_t> v = ValueOf(p);
    if (!v) {
      ++s.unknown;
      continue;
    }
    if (!s.min || *v < *s.min) s.min = v;
    if (!s.max || *v > *s.max) s.max = v;
    s.last = v;
  }
  return s;
}

// What marks a point's capture (report/capture_marks.h): a change of tier there (TierChangesOf), its
// sweep and its labels by source.
std::string MarksOf(const v1::HistoryPoint& p, const std::string& tier_change) {
  return report::CaptureMarksText(p.sweep_id(), LabelMapOf(p.labels()), LabelMapOf(p.agent_labels()), tier_change);
}

// The tier change each of the sorted points marks ("" for none): a phone rooted later, or the reverse,
// gives figures that do not compare with those before (docs/accounting.md section 9).
std::vector<std::string> TierChangesOf(const std::vector<v1::HistoryPoint>& points) {
  std::vector<std::string> tiers;
  tiers.reserve(points.size());
  for (const v1::HistoryPoint& p : points) tiers.push_back(p.tier());
  return report::TierChanges(tiers);
}

json TextOrNull(const std::string& text) { return text.empty() ? json(nullptr) : json(text); }

json LabelsJson(const google::protobuf::RepeatedPtrField<v1::Label>& labels) {
  json object = json::object();
  for (const auto& [key, value] : LabelMapOf(labels)) object[key] = value;
  return object;
}

std::string KbText(const std::optional<int64_t>& v) {
  return v ? FormatKb(*v) + " kB (" + FormatKbHuman(*v) + ")" : std::string(chart::kNoValue);
}

// The name `typed` means on the device, by the names in its latest report — for when no stored capture
// has a process named exactly `typed`. `none` is the answer for "nothing matches" (the server's, when it
// said so: it also says "unknown device").
absl::StatusOr<std::string> ResolveOnDevice(ServerClient& client, const std::string& device_id,
                                            const std::string& typed, const absl::Status& none) {
  v1::GetReportRequest request;
  request.set_device_id(device_id);
  absl::StatusOr<v1::GetReportResponse> latest = client.GetReport(request);
  if (!latest.ok()) return latest.status().code() == absl::StatusCode::kNotFound ? none : latest.status();
  const std::vector<std::string> names = ProcessNamesInReport(latest->report_json());
  absl::StatusOr<std::string> resolved = ResolveProcessName(typed, names, "in the latest report of " + device_id);
  if (resolved.ok() && *resolved != typed) return resolved;
  if (resolved.ok() || resolved.status().code() == absl::StatusCode::kNotFound) {
    std::vector<std::string> closest = ClosestProcessNames(typed, names);
    if (closest.empty()) return none;
    return absl::NotFoundError(absl::StrCat(none.message(), "; closest names in its latest report: \"",
                                            absl::StrJoin(closest, "\", \""), "\""));
  }
  return resolved.status();
}

// The retention marks these points reach back past (sorted points): thinned history is said so; a mark
// older than every point says nothing about them. Empty = all at full resolution.
struct Thinned {
  std::string hourly_before;
  std::string daily_before;
};

Thinned ThinnedOf(const std::vector<v1::HistoryPoint>& points, const v1::ProcessHistoryResponse& history) {
  Thinned t;
  if (points.empty()) return t;
  const std::string& first = points.front().captured_at();
  if (!history.hourly_before().empty() && first < history.hourly_before()) t.hourly_before = history.hourly_before();
  if (!history.daily_before().empty() && first < history.daily_before()) t.daily_before = history.daily_before();
  return t;
}

}  // namespace

std::string RenderTrend(const TrendArgs& args, const v1::ProcessHistoryResponse& history, OutputFormat format) {
  const std::vector<v1::HistoryPoint> points = Sorted(history);
  const std::string metric = MetricName(args.metric);
  const Summary summary = Summarize(points);
  const Thinned thinned = ThinnedOf(points, history);
  const std::vector<std::string> tier_changes = TierChangesOf(points);
  if (format == OutputFormat::kJson) {
    json list = json::array();
    for (size_t i = 0; i < points.size(); ++i) {
      const v1::HistoryPoint& p = points[i];
      list.push_back({{"captured_at", p.captured_at()},
                      {"capture_id", p.capture_id()},
                      {"pid", p.pid()},
                      {"value_kb", KbJson(ValueOf(p))},
                      {"sweep_id", TextOrNull(p.sweep_id())},
                      {"labels", LabelsJson(p.labels())},
                      {"agent_labels", LabelsJson(p.agent_labels())},
                      {"tier", TextOrNull(p.tier())},
                      {"tier_change", TextOrNull(tier_changes[i])}});
    }
    json out = {{"device_id", args.device_id},
                {"process", args.process_name.empty() ? json(nullptr) : json(args.process_name)},
                {"metric", (args.process_name.empty() ? "device." : "process.") + metric},
                {"since", args.since.empty() ? json(nullptr) : json(args.since)},
                {"points", std::move(list)},
                {"min_kb", KbJson(summary.min)},
                {"max_kb", KbJson(summary.max)},
                {"last_kb", KbJson(summary.last)}};
    out["thinned"] =
        thinned.hourly_before.empty()
            ? json(nullptr)
            : json({{"hourly_before", thinned.hourly_before},
                    {"daily_before", thinned.daily_before.empty() ? json(nullptr) : json(thinned.daily_before)}});
    return out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  }
  if (format == OutputFormat::kCsv) {
    std::string out = CsvRow({"captured_at", "capture_id", "pid", metric, "sweep_id", "labels", "agent_labels"});
    for (const v1::HistoryPoint& p : points) {
      out += CsvRow({p.captured_at(), p.capture_id(), std::to_string(p.pid()), CsvKb(ValueOf(p)), p.sweep_id(),
                     LabelsText(LabelMapOf(p.labels())), LabelsText(LabelMapOf(p.agent_labels()))});
    }
    return out;
  }
  std::string out = TerminalSafe((args.process_name.empty() ? "device" : args.process_name) + " " + metric + " on " +
                                 args.device_id + (args.since.empty() ? "" : " since " + args.since)) +
                    "\n";
  // A change of tier, the sweep and the labels of a capture, as the dashboard's list of captures shows
  // them: a column only when some capture has them, once per capture (not on each of its pids' rows).
  std::vector<std::string> marks;
  for (size_t i = 0; i < points.size(); ++i) marks.push_back(MarksOf(points[i], tier_changes[i]));
  const bool marked = std::any_of(marks.begin(), marks.end(), [](const std::string& m) { return !m.empty(); });
  std::vector<TextTable::Column> columns = {
      {"TIME"}, {args.process_name.empty() ? "" : "PID", TextTable::kRight}, {metric, TextTable::kRight}, {"NOTE"}};
  if (marked) columns.push_back({"MARKS"});
  TextTable table(std::move(columns));
  std::vector<std::optional<int64_t>> values;
  // One name, several pids (docs/accounting.md): a row per pid, and a restart only where a capture's set of
  // pids differs from the capture before it, not between two pids of one capture.
  std::map<std::string, std::set<int64_t>> pids_of;  // capture id -> its pids
  for (const v1::HistoryPoint& p : points) pids_of[p.capture_id()].insert(p.pid());
  for (size_t i = 0; i < points.size(); ++i) {
    const v1::HistoryPoint& p = points[i];
    std::string note;
    const std::set<int64_t>& pids = pids_of[p.capture_id()];
    const bool first_of_capture = i == 0 || points[i - 1].capture_id() != p.capture_id();
    if (!args.process_name.empty() && first_of_capture && i > 0 && pids != pids_of[points[i - 1].capture_id()]) {
      note = "new pid (restarted)";
    }
    if (!args.process_name.empty() && pids.size() > 1 && first_of_capture) {
      note += (note.empty() ? "" : "; ") + std::to_string(pids.size()) + " pids in this capture";
    }
    if (!p.value_known()) note = note.empty() ? "figure unknown in that report" : note + "; figure unknown";
    table.AddRow({p.captured_at(), args.process_name.empty() ? "" : std::to_string(p.pid()),
                  p.value_known() ? FormatKb(p.value_kb()) : chart::kNoValue, note, first_of_capture ? marks[i] : ""});
    values.push_back(ValueOf(p));
  }
  out += table.Render(2) + "\n";
  out += "  " + Sparkline(values) + "\n";
  out += "  min " + KbText(summary.min) + "   max " + KbText(summary.max) + "   last " + KbText(summary.last) + "   (" +
         std::to_string(points.size()) + (points.size() == 1 ? " sample" : " samples") +
         (summary.unknown ? ", " + std::to_string(summary.unknown) + " unknown" : "") + ")\n";
  if (!thinned.hourly_before.empty()) {
    out += TerminalSafe("  resolution: one capture an hour before " + thinned.hourly_before +
                        (thinned.daily_before.empty() ? "" : ", one a day before " + thinned.daily_before) +
                        " (retention); every capture after") +
           "\n";
  }
  return out;
}

std::string RenderTrendSvg(const TrendArgs& args, const v1::ProcessHistoryResponse& history) {
  std::vector<ChartPoint> chart;
  for (const v1::HistoryPoint& p : Sorted(history)) {
    absl::StatusOr<int64_t> t = ParseRfc3339(p.captured_at());
    if (!p.value_known() || !t.ok()) continue;
    chart.push_back({*t, p.value_kb()});
  }
  ChartOptions options;
  options.title = (args.process_name.empty() ? "device" : args.process_name) + " " + MetricName(args.metric) + " on " +
                  args.device_id;
  options.value_label = MetricName(args.metric);
  return RenderSvgLineChart(chart, options);
}

int RunTrend(const TrendArgs& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<OutputFormat> format = OutputFormatOf(args.common);
  if (!format.ok()) return PrintFailure(format.status(), "trend", err);
  if (args.device_id.empty()) {
    return PrintFailure(absl::InvalidArgumentError("give a DEVICE (and --process NAME for a process), e.g. memfleet "
                                                   "trend pixel-7 --process surfaceflinger --since 7d"),
                        "trend", err);
  }
  const std::string metric = MetricName(args.metric);
  if (!ValidMetric(metric)) {
    return PrintFailure(absl::InvalidArgumentError("--metric \"" + args.metric +
                                                   "\": give a process figure such as total_kb, pss_kb, gl_kb, dma_kb, "
                                                   "app_summary.native_heap_kb or heaps.dalvik.pss_kb"),
                        "trend", err);
  }
  TrendArgs resolved = args;
  v1::ProcessHistoryRequest request;
  request.set_device_id(args.device_id);
  request.set_process_name(args.process_name);
  request.set_metric(metric);
  request.set_limit(args.limit);
  if (!args.since.empty()) {
    absl::StatusOr<std::string> since = ParseTimeSpec(args.since, NowUnixSeconds(args.now));
    if (!since.ok()) {
      return PrintFailure(absl::InvalidArgumentError("--since: " + std::string(since.status().message())), "trend",
                          err);
    }
    request.set_since(*since);
    resolved.since = *since;
  }
  absl::StatusOr<std::unique_ptr<ServerClient>> client = ConnectToServer(args.common);
  if (!client.ok()) return PrintFailure(client.status(), "trend", err);
  absl::StatusOr<v1::ProcessHistoryResponse> history = (*client)->GetProcessHistory(request);
  // The server says NotFound, or (with --since) sends no points, when no capture has the name exactly.
  // Without --process there is no name to resolve: the device's own figures.
  const bool none_exact = args.process_name.empty() ? false
                          : history.ok()            ? history->points_size() == 0
                                                    : history.status().code() == absl::StatusCode::kNotFound;
  if (!history.ok() && !none_exact) return PrintFailure(history.status(), "trend", err);
  if (none_exact) {
    // Names are cmdlines verbatim; what was typed may be a base name or an end of one.
    const absl::Status none =
        history.ok()
            ? absl::NotFoundError("no stored capture of " + args.device_id + " has a process named \"" +
                                  args.process_name + "\"" + (resolved.since.empty() ? "" : " since " + resolved.since))
            : history.status();
    absl::StatusOr<std::string> name = ResolveOnDevice(**client, args.device_id, args.process_name, none);
    if (!name.ok()) return PrintFailure(name.status(), "trend", err);
    err << "memfleet trend: \"" << TerminalSafe(args.process_name) << "\" is \"" << TerminalSafe(*name) << "\"\n";
    resolved.process_name = *name;
    request.set_process_name(*name);
    history = (*client)->GetProcessHistory(request);
    if (!history.ok()) return PrintFailure(history.status(), "trend", err);
    if (history->points_size() == 0) {
      return PrintFailure(
          absl::NotFoundError("no stored capture of " + args.device_id + " has a process named \"" + *name + "\"" +
                              (resolved.since.empty() ? "" : " since " + resolved.since)),
          "trend", err);
    }
  }
  out << RenderTrend(resolved, *history, *format);
  if (!args.svg_path.empty()) {
    std::ofstream file(args.svg_path, std::ios::binary | std::ios::trunc);
    if (file) file << RenderTrendSvg(resolved, *history);
    file.close();
    if (!file) {
      err << "memfleet trend: cannot write " << args.svg_path << ": " << std::strerror(errno) << "\n";
      return kExitFailed;
    }
    err << "memfleet trend: wrote the chart to " << args.svg_path << "\n";
  }
  return kExitOk;
}

CommandLine RegisterTrendCommand(CLI::App& app) {
  auto args = std::make_shared<TrendArgs>();
  CLI::App* cmd = AddServerCommand(
      &app, "trend", "One device figure, or with --process one process figure, over a device's captures", args->common);
  cmd->add_option("DEVICE", args->device_id, "device id")->required();
  cmd->add_option("--process", args->process_name, "process name (default: the device's own figures)");
  cmd->add_option("--metric", args->metric,
                  "figure: total_kb, pss_kb, gl_kb, dma_kb, ..., an App Summary field (app_summary.native_heap_kb) "
                  "or a heap's (heaps.dalvik.pss_kb) of the process; total_kb, kernel_kb, processes_kb, ... of the "
                  "device")
      ->capture_default_str();
  cmd->add_option("--since", args->since, "from a span back (7d, 24h, 90m) or an RFC 3339 time; default: all");
  cmd->add_option("--limit", args->limit, "only the newest N points (0 = all)");
  cmd->add_option("--svg", args->svg_path, "also write an SVG line chart to FILE");
  return ServerCommandLine(cmd, args, &RunTrend);
}

}  // namespace memfleet::cli
