// RenderFleetMetrics on the sample captures' expected reports (tests/data/captures/*/expected.json, the
// figures the accounting rules give): every device and process figure is there in bytes (× 1024), a
// device's memory parts add up to its total, a null figure has no series, hostile device text stays inside
// its label, and the text has HELP and TYPE lines.
#include "server/http/metrics/fleet_metrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "nlohmann/json.hpp"
#include "report/report_json.h"
#include "server/http/metrics/device_figures.h"
#include "tests/support/device_memory_series.h"
#include "tests/support/prometheus_text.h"
#include "tests/support/test_data.h"

namespace memfleet::metrics {
namespace {

using nlohmann::json;
using testing::FindSample;
using testing::ParsePrometheusText;
using testing::PromSample;

const std::vector<std::string> kCaptures = {"generic-noddr", "legacy-419",  "mali-rockchip", "mtk-mt6989",
                                            "qcom-edge",     "qcom-sm8450", "xring-o1"};
const std::vector<std::string> kProcessParts = {"total", "gl", "dma", "native_graphics", "non_graphics"};

json Expected(const std::string& capture) {
  return json::parse(testing::ReadTestData("captures/" + capture + "/expected.json"));
}

DeviceMetricsRow RowOf(const std::string& capture, size_t top_processes) {
  absl::StatusOr<report::Report> r =
      report::ReportFromJson(testing::ReadTestData("captures/" + capture + "/expected.json"));
  EXPECT_TRUE(r.ok()) << r.status();
  DeviceMetricsRow row;
  row.device_id = capture;
  row.model = "model of " + capture;
  row.build = "build/" + capture;
  row.up = true;
  row.last_capture_unix_s = 1764892800;
  if (r.ok()) row.figures = FiguresOf(*r, top_processes);
  return row;
}

std::string RenderAll(size_t top_processes) {
  RenderInput in;
  for (const std::string& c : kCaptures) in.devices.push_back(RowOf(c, top_processes));
  return RenderFleetMetrics(in);
}

// The expected figure of a process name: the sum over its pids, null when any of them is null.
std::map<std::string, json> ExpectedByName(const json& processes, const std::string& field) {
  std::map<std::string, json> sums;
  for (const auto& [pid, p] : processes.items()) {
    const std::string name = p["name"];
    const json& v = p[field];
    if (!sums.count(name)) {
      sums[name] = v;
    } else if (sums[name].is_null() || v.is_null()) {
      sums[name] = nullptr;
    } else {
      sums[name] = sums[name].get<int64_t>() + v.get<int64_t>();
    }
  }
  return sums;
}

TEST(FleetMetricsTest, DeviceFiguresAreTheExpectedReportsInBytesAndNullsAreAbsent) {
  const std::vector<PromSample> samples = ParsePrometheusText(RenderAll(20));
  int nulls = 0;
  for (const std::string& c : kCaptures) {
    const json device = Expected(c)["device"];
    for (const testing::DeviceMemorySeries& series : testing::kDeviceMemorySeries) {
      const json& kb = device[series.field];
      std::optional<double> v = FindSample(samples, series.name, series.Labels(c));
      if (kb.is_null()) {
        EXPECT_FALSE(v.has_value()) << c << " " << series.field << " is null in the report, so no series";
        ++nulls;
      } else {
        ASSERT_TRUE(v.has_value()) << c << " " << series.field;
        EXPECT_EQ(*v, kb.get<double>() * 1024) << c << " " << series.field;
      }
    }
  }
  EXPECT_EQ(nulls, 3) << "legacy-419 has kernel_cma_kb, kernel_kb and total_kb null";
  // 0 is a figure, not a null: qcom-edge's gcma_kb is 0.
  EXPECT_EQ(FindSample(samples, "memfleet_device_gcma_bytes", {{"device_id", "qcom-edge"}}), 0.0);
}

// The parts of memfleet_device_memory_bytes partition the device's total (docs/accounting.md section 3:
// total_kb = static_reserved_kb + kernel_kb + processes_kb), so sum by (device_id) is the total. Summing
// every part of the old shape (the total beside its parts, kernel_cma inside kernel) gave about twice it.
TEST(FleetMetricsTest, TheMemoryPartsAddUpToTheDevicesTotal) {
  const std::vector<PromSample> samples = ParsePrometheusText(RenderAll(20));
  std::map<std::string, double> sums;
  std::map<std::string, std::set<std::string>> parts;
  for (const PromSample& s : samples) {
    if (s.name != "memfleet_device_memory_bytes") continue;
    sums[s.labels.at("device_id")] += std::strtod(s.value.c_str(), nullptr);
    parts[s.labels.at("device_id")].insert(s.labels.at("part"));
  }
  int totals = 0;
  for (const std::string& c : kCaptures) {
    const json total_kb = Expected(c)["device"]["total_kb"];
    if (total_kb.is_null()) continue;
    EXPECT_EQ(parts[c], (std::set<std::string>{"static_reserved", "kernel", "processes"})) << c;
    EXPECT_EQ(sums[c], total_kb.get<double>() * 1024) << c << ": the parts add up to device.total_kb";
    EXPECT_EQ(FindSample(samples, "memfleet_device_total_bytes", {{"device_id", c}}), sums[c]) << c;
    ++totals;
  }
  EXPECT_EQ(totals, 6);
  // qcom-sm8450 (its expected report): 480,128 + 596,903 + 2,490,615 = 3,567,646 kB.
  EXPECT_EQ(sums["qcom-sm8450"], 3653269504.0);
  EXPECT_EQ(FindSample(samples, "memfleet_device_total_bytes", {{"device_id", "qcom-sm8450"}}), 3653269504.0);
  EXPECT_EQ(FindSample(samples, "memfleet_device_kernel_cma_bytes", {{"device_id", "qcom-sm8450"}}), 75756.0 * 1024);
  // legacy-419's kernel_kb is null: its part is absent and so is its total; what is left sums to no total.
  EXPECT_EQ(parts["legacy-419"], (std::set<std::string>{"static_reserved", "processes"}));
  EXPECT_EQ(sums["legacy-419"], (708496.0 + 1216095.0) * 1024);
  EXPECT_FALSE(FindSample(samples, "memfleet_device_total_bytes", {{"device_id", "legacy-419"}}).has_value());
}

TEST(FleetMetricsTest, DeviceLabelsCarryModelPlatformAndBuild) {
  const std::vector<PromSample> samples = ParsePrometheusText(RenderAll(20));
  for (const std::string& c : kCaptures) {
    const std::string platform = Expected(c)["platform"];
    EXPECT_EQ(
        FindSample(samples, "memfleet_device_up",
                   {{"device_id", c}, {"model", "model of " + c}, {"platform", platform}, {"build", "build/" + c}}),
        1.0)
        << c;
    EXPECT_EQ(FindSample(samples, "memfleet_device_last_capture_timestamp_seconds", {{"device_id", c}}), 1764892800.0);
    EXPECT_EQ(FindSample(samples, "memfleet_device_dropped_captures_total", {{"device_id", c}}), 0.0);
  }
}

TEST(FleetMetricsTest, EveryProcessNameOfTheReportWhenTopIsLarge) {
  const std::vector<PromSample> samples = ParsePrometheusText(RenderAll(1000));
  int nulls = 0;
  for (const std::string& c : kCaptures) {
    const json processes = Expected(c)["processes"];
    for (const std::string& part : kProcessParts) {
      for (const auto& [name, kb] : ExpectedByName(processes, part + "_kb")) {
        std::optional<double> v =
            FindSample(samples, "memfleet_process_memory_bytes", {{"device_id", c}, {"process", name}, {"part", part}});
        if (kb.is_null()) {
          EXPECT_FALSE(v.has_value()) << c << " " << name << " " << part;
          ++nulls;
        } else {
          ASSERT_TRUE(v.has_value()) << c << " " << name << " " << part;
          EXPECT_EQ(*v, kb.get<double>() * 1024) << c << " " << name << " " << part;
        }
      }
    }
  }
  EXPECT_GT(nulls, 0) << "legacy-419 has null process figures";
  for (const PromSample& s : samples) EXPECT_EQ(s.labels.count("pid"), 0u) << "never a pid label";
}

// --metrics-app-summary: the App Summary of each top process, from reports that carry it (the sample
// captures' expected.json with the spec's expected-heaps.json put in), in bytes; none for a process
// captured with smaps_rollup only, and none at all without the flag.
TEST(FleetMetricsTest, AppSummaryOnlyWhenAskedAndOnlyWithFullSmaps) {
  RenderInput in;
  in.app_summary = true;
  for (const std::string& c : kCaptures) {
    absl::StatusOr<report::Report> r =
        report::ReportFromJson(testing::ReadTestData("captures/" + c + "/expected.json"));
    ASSERT_TRUE(r.ok()) << r.status();
    const json heaps = json::parse(testing::ReadTestData("captures/" + c + "/expected-heaps.json"))["processes"];
    for (auto& [pid, p] : r->processes) {
      const json& summary = heaps[std::to_string(pid)]["app_summary"];
      if (summary.is_null()) continue;
      report::AppSummary a;
      for (const report::AppSummaryField& f : report::kAppSummaryFields) a.*(f.member) = summary[f.name].get<int64_t>();
      p.app_summary = a;
    }
    DeviceMetricsRow row;
    row.device_id = c;
    row.figures = FiguresOf(*r, 1000);
    in.devices.push_back(row);
  }
  const std::vector<PromSample> samples = ParsePrometheusText(RenderFleetMetrics(in));
  int with = 0, without = 0;
  for (const std::string& c : kCaptures) {
    const json processes = Expected(c)["processes"];
    const std::map<std::string, json> totals = ExpectedByName(processes, "total_kb");
    const json heaps = json::parse(testing::ReadTestData("captures/" + c + "/expected-heaps.json"))["processes"];
    for (const auto& [pid, p] : heaps.items()) {
      const std::string name = processes[pid]["name"];
      std::optional<double> v = FindSample(samples, "memfleet_process_app_summary_bytes",
                                           {{"device_id", c}, {"process", name}, {"part", "native_heap"}});
      if (p["app_summary"].is_null()) {
        EXPECT_FALSE(v.has_value()) << c << " " << name;
        ++without;
      } else if (totals.size() == processes.size()) {  // one pid per name: the value is that pid's
        ASSERT_TRUE(v.has_value()) << c << " " << name;
        EXPECT_EQ(*v, p["app_summary"]["native_heap_kb"].get<double>() * 1024) << c << " " << name;
        ++with;
      }
    }
  }
  EXPECT_GT(with, 0);
  EXPECT_GT(without, 0) << "qcom-edge has processes with smaps_rollup only";
  // qcom-sm8450 pid 12083: TOTAL PSS 173450 kB, its nine fields all written.
  const std::string name = Expected("qcom-sm8450")["processes"]["12083"]["name"];
  EXPECT_EQ(FindSample(samples, "memfleet_process_app_summary_bytes",
                       {{"device_id", "qcom-sm8450"}, {"process", name}, {"part", "total_pss"}}),
            173450.0 * 1024);
  size_t fields = 0;
  for (const PromSample& s : samples) {
    fields += s.name == "memfleet_process_app_summary_bytes" && s.labels.at("device_id") == "qcom-sm8450" &&
              s.labels.at("process") == name;
  }
  EXPECT_EQ(fields, 9u);
  in.app_summary = false;
  EXPECT_EQ(RenderFleetMetrics(in).find("memfleet_process_app_summary_bytes"), std::string::npos);
}

TEST(FleetMetricsTest, TopProcessesAreTheBiggestTotalsOfEachDevice) {
  const std::vector<PromSample> samples = ParsePrometheusText(RenderAll(3));
  for (const std::string& c : kCaptures) {
    std::vector<std::pair<int64_t, std::string>> totals;
    for (const auto& [name, kb] : ExpectedByName(Expected(c)["processes"], "total_kb")) {
      if (!kb.is_null()) totals.emplace_back(kb.get<int64_t>(), name);
    }
    std::sort(totals.rbegin(), totals.rend());
    std::set<std::string> expected_names;
    for (size_t i = 0; i < totals.size() && i < 3; ++i) expected_names.insert(totals[i].second);
    std::set<std::string> names;
    for (const PromSample& s : samples) {
      if (s.name == "memfleet_process_memory_bytes" && s.labels.at("device_id") == c)
        names.insert(s.labels.at("process"));
    }
    if (totals.size() >= 3) {
      EXPECT_EQ(names, expected_names) << c;
    } else {
      // legacy-419: fewer than 3 processes with a total; the rest of the top 3 are null totals.
      EXPECT_EQ(names.size(), 3u) << c;
      for (const std::string& n : expected_names) EXPECT_TRUE(names.count(n)) << c << " " << n;
    }
  }
}

TEST(FleetMetricsTest, ProcessesOfOneNameAreSummed) {
  report::Report r;
  for (int pid : {10, 11, 12}) {
    report::ProcessReport p;
    p.pid = pid;
    p.name = "com.example.app:service";
    p.total_kb = 100 * pid;
    p.gl_kb = pid;
    p.dma_kb = pid == 11 ? std::nullopt : report::Kb(1);
    r.processes[pid] = p;
  }
  DeviceFigures f = FiguresOf(r, 20);
  ASSERT_EQ(f.top_processes.size(), 1u);
  EXPECT_EQ(f.top_processes[0].process_count, 3u);
  EXPECT_EQ(f.top_processes[0].total_kb, 3300);
  EXPECT_EQ(f.top_processes[0].gl_kb, 33);
  EXPECT_FALSE(f.top_processes[0].dma_kb.has_value()) << "one null pid makes the name's sum null";
}

TEST(FleetMetricsTest, HostileDeviceTextStaysInsideItsLabel) {
  RenderInput in;
  DeviceMetricsRow row;
  row.device_id = "phone\"} 1\nmemfleet_device_up{device_id=\"x";
  row.model = "back\\slash";
  row.build = "bad\xff\xfe utf8 \xe2\x82";
  row.platform = "qcom";
  row.figures = DeviceFigures();
  row.figures->platform = "qcom";
  row.figures->total_kb = 1;
  row.figures->top_processes.push_back(
      {"name\nwith \"quotes\"", 1, 2, std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt});
  in.devices.push_back(row);
  const std::string text = RenderFleetMetrics(in);
  EXPECT_NE(text.find("memfleet_device_up{device_id=\"phone\\\"} 1\\nmemfleet_device_up{device_id=\\\"x\","
                      "model=\"back\\\\slash\",platform=\"qcom\",build=\"bad\xEF\xBF\xBD\xEF\xBF\xBD utf8 "
                      "\xEF\xBF\xBD\xEF\xBF\xBD\"} 0\n"),
            std::string::npos)
      << text;
  const std::vector<PromSample> samples = ParsePrometheusText(text);
  EXPECT_EQ(FindSample(samples, "memfleet_device_total_bytes", {{"device_id", row.device_id}}), 1024.0);
  EXPECT_EQ(FindSample(samples, "memfleet_process_memory_bytes", {{"process", "name\nwith \"quotes\""}}), 2048.0);
  // One up series only: the hostile id did not start a line of its own.
  int up = 0;
  for (const PromSample& s : samples) up += s.name == "memfleet_device_up";
  EXPECT_EQ(up, 1);
}

TEST(FleetMetricsTest, ADeviceWithoutAReportHasStateButNoMemory) {
  RenderInput in;
  DeviceMetricsRow row;
  row.device_id = "new-phone";
  row.platform = "mtk";
  row.dropped_captures = 7;
  in.devices.push_back(row);
  const std::vector<PromSample> samples = ParsePrometheusText(RenderFleetMetrics(in));
  EXPECT_EQ(FindSample(samples, "memfleet_device_up", {{"device_id", "new-phone"}, {"platform", "mtk"}}), 0.0);
  EXPECT_EQ(FindSample(samples, "memfleet_device_dropped_captures_total", {{"device_id", "new-phone"}}), 7.0);
  EXPECT_FALSE(FindSample(samples, "memfleet_device_last_capture_timestamp_seconds", {}).has_value());
  EXPECT_FALSE(FindSample(samples, "memfleet_device_memory_bytes", {}).has_value());
  EXPECT_FALSE(FindSample(samples, "memfleet_device_total_bytes", {}).has_value());
}

// The tier of each device's figures is one info series per device, so no figure's series changes its
// labels when a phone changes tier; a device whose tier is unknown has none (never a guessed "kernel").
TEST(FleetMetricsTest, EachDeviceOfAKnownTierHasOneTierSeries) {
  RenderInput in;
  for (const auto& [id, tier] :
       {std::pair<std::string, std::string>{"shell-phone", "dumpsys"}, {"rooted-phone", "kernel"}, {"old-phone", ""}}) {
    DeviceMetricsRow row;
    row.device_id = id;
    row.platform = "generic";
    row.tier = tier;
    in.devices.push_back(row);
  }
  const std::vector<PromSample> samples = ParsePrometheusText(RenderFleetMetrics(in));
  EXPECT_EQ(FindSample(samples, "memfleet_device_tier", {{"device_id", "shell-phone"}, {"tier", "dumpsys"}}), 1.0);
  EXPECT_EQ(FindSample(samples, "memfleet_device_tier", {{"device_id", "rooted-phone"}, {"tier", "kernel"}}), 1.0);
  EXPECT_FALSE(FindSample(samples, "memfleet_device_tier", {{"device_id", "old-phone"}}).has_value());
  int tier_series = 0;
  for (const PromSample& s : samples) {
    tier_series += s.name == "memfleet_device_tier";
    if (s.name != "memfleet_device_tier") {
      for (const auto& [name, value] : s.labels) EXPECT_NE(name, "tier") << s.name;
    }
  }
  EXPECT_EQ(tier_series, 2);
}

TEST(FleetMetricsTest, ServerCountersAndTheLatencyHistogram) {
  ServerCounters counters;
  counters.CountStored();
  counters.CountStored();
  counters.CountDuplicate();
  counters.CountRejected();
  for (double s : {0.004, 0.02, 0.02, 3.0, 100.0}) counters.ObserveIngestLatency(s);
  RenderInput in;
  in.server = counters.Snapshot();
  in.server.agents_connected = 4;
  in.server.sweeps_started = 2;
  in.server.sweeps_running = 1;
  in.server.inflight_bytes = 3 << 20;
  in.server.inflight_capacity_bytes = 64 << 20;
  in.server.streams_waiting_for_room = 7;
  in.server.capture_commits = 5;
  const std::vector<PromSample> samples = ParsePrometheusText(RenderFleetMetrics(in));
  EXPECT_EQ(FindSample(samples, "memfleet_ingest_inflight_bytes", {}), 3145728.0);
  EXPECT_EQ(FindSample(samples, "memfleet_ingest_inflight_capacity_bytes", {}), 67108864.0);
  EXPECT_EQ(FindSample(samples, "memfleet_ingest_streams_waiting", {}), 7.0);
  EXPECT_EQ(FindSample(samples, "memfleet_ingest_commits_total", {}), 5.0);
  EXPECT_EQ(FindSample(samples, "memfleet_captures_stored_total", {}), 2.0);
  EXPECT_EQ(FindSample(samples, "memfleet_captures_duplicate_total", {}), 1.0);
  EXPECT_EQ(FindSample(samples, "memfleet_captures_rejected_total", {}), 1.0);
  EXPECT_EQ(FindSample(samples, "memfleet_agents_connected", {}), 4.0);
  EXPECT_EQ(FindSample(samples, "memfleet_sweeps_started_total", {}), 2.0);
  EXPECT_EQ(FindSample(samples, "memfleet_sweeps_running", {}), 1.0);
  // Cumulative buckets: 0.004 <= 0.005; two more by 0.025; 3.0 by 5; 100 only in +Inf.
  EXPECT_EQ(FindSample(samples, "memfleet_ingest_latency_seconds_bucket", {{"le", "0.005"}}), 1.0);
  EXPECT_EQ(FindSample(samples, "memfleet_ingest_latency_seconds_bucket", {{"le", "0.01"}}), 1.0);
  EXPECT_EQ(FindSample(samples, "memfleet_ingest_latency_seconds_bucket", {{"le", "0.025"}}), 3.0);
  EXPECT_EQ(FindSample(samples, "memfleet_ingest_latency_seconds_bucket", {{"le", "2.5"}}), 3.0);
  EXPECT_EQ(FindSample(samples, "memfleet_ingest_latency_seconds_bucket", {{"le", "5"}}), 4.0);
  EXPECT_EQ(FindSample(samples, "memfleet_ingest_latency_seconds_bucket", {{"le", "30"}}), 4.0);
  EXPECT_EQ(FindSample(samples, "memfleet_ingest_latency_seconds_bucket", {{"le", "+Inf"}}), 5.0);
  EXPECT_EQ(FindSample(samples, "memfleet_ingest_latency_seconds_count", {}), 5.0);
  EXPECT_NEAR(*FindSample(samples, "memfleet_ingest_latency_seconds_sum", {}), 103.044, 1e-9);
}

// Each family once, its HELP and TYPE before its samples, its samples together; every family is one
// ExportedSeriesNames knows.
TEST(FleetMetricsTest, FamiliesHaveHelpAndTypeAndAreContiguous) {
  std::istringstream in(RenderAll(20));
  const std::vector<std::string> exported = ExportedSeriesNames();
  std::set<std::string> done;
  std::string current;
  bool help = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# HELP ", 0) == 0) {
      std::string name = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_TRUE(done.insert(name).second) << "family twice: " << name;
      current = name;
      help = true;
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      EXPECT_TRUE(help);
      EXPECT_EQ(line.substr(7, current.size() + 1), current + " ");
      continue;
    }
    const std::string name = line.substr(0, line.find_first_of("{ "));
    EXPECT_TRUE(name == current || name == current + "_bucket" || name == current + "_sum" ||
                name == current + "_count")
        << name << " outside its family " << current;
    EXPECT_NE(std::find(exported.begin(), exported.end(), name), exported.end()) << name;
  }
  EXPECT_EQ(done.size(), 21u);
}

}  // namespace
}  // namespace memfleet::metrics
