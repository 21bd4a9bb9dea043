// The cost of GET /metrics for a fleet: RenderFleetMetrics over N devices whose figures are cached (a
// steady scrape: MetricsSource keeps each device's figures until its latest capture changes), and reading
// N stored reports into figures (ReportFromJson + FiguresOf: the first scrape, or every device having
// captured since the last one). Each device is qcom-sm8450's expected report (tests/data/captures) with
// its processes repeated to 400 (a phone has 300-600), top 20 processes kept.
//
// Baseline, in the same run: BM_CopyRenderedText copies the bytes the render writes (one string of that
// size built by appends): the render's ratio to it is what formatting and escaping add.
//
//   bin/metrics_benchmark
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "report/report_json.h"
#include "server/http/metrics/device_figures.h"
#include "server/http/metrics/fleet_metrics.h"
#include "tests/support/test_paths.h"

namespace memfleet::metrics {
namespace {

constexpr size_t kProcessesPerDevice = 400;
constexpr size_t kTopProcesses = 20;

std::string ReadFixture(const std::string& relative) {
  std::ifstream in(testing::TestData(relative));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A phone-sized report JSON: the sample's processes repeated, each copy under its own name and pids.
std::string PhoneReportJson() {
  absl::StatusOr<report::Report> sample = report::ReportFromJson(ReadFixture("captures/qcom-sm8450/expected.json"));
  if (!sample.ok()) return "";
  report::Report phone = *sample;
  phone.processes.clear();
  int pid = 1000;
  while (phone.processes.size() < kProcessesPerDevice) {
    for (const auto& [old_pid, p] : sample->processes) {
      report::ProcessReport copy = p;
      copy.pid = ++pid;
      copy.name = absl::StrCat(p.name, ":", pid);
      phone.processes[pid] = copy;
      if (phone.processes.size() == kProcessesPerDevice) break;
    }
  }
  return report::ReportToJson(phone, -1);
}

RenderInput Fleet(size_t devices) {
  absl::StatusOr<report::Report> phone = report::ReportFromJson(PhoneReportJson());
  const DeviceFigures figures = FiguresOf(*phone, kTopProcesses);
  RenderInput in;
  for (size_t i = 0; i < devices; ++i) {
    DeviceMetricsRow d;
    d.device_id = absl::StrCat("lab-phone-", i);
    d.model = absl::StrCat("SM8", 450 + i % 7);
    d.build = absl::StrCat("vendor/product/device:14/UP1A.", i % 5, "/eng.build:userdebug/test-keys");
    d.up = i % 3 != 0;
    d.last_capture_unix_s = 1764892800 + static_cast<double>(i);
    d.figures = figures;
    in.devices.push_back(std::move(d));
  }
  return in;
}

void BM_RenderCached(benchmark::State& state) {
  const RenderInput in = Fleet(static_cast<size_t>(state.range(0)));
  size_t bytes = 0;
  for (auto _ : state) {
    std::string text = RenderFleetMetrics(in);
    bytes = text.size();
    benchmark::DoNotOptimize(text);
  }
  state.counters["text_bytes"] = static_cast<double>(bytes);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_RenderCached)->Arg(100)->Arg(1000)->Arg(5000)->Unit(benchmark::kMillisecond);

void BM_CopyRenderedText(benchmark::State& state) {
  const std::string text = RenderFleetMetrics(Fleet(static_cast<size_t>(state.range(0))));
  const size_t line = 100;  // appended in pieces of about one sample line, as the render appends
  for (auto _ : state) {
    std::string copy;
    for (size_t at = 0; at < text.size(); at += line) copy.append(text, at, line);
    benchmark::DoNotOptimize(copy);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_CopyRenderedText)->Arg(100)->Arg(1000)->Arg(5000)->Unit(benchmark::kMillisecond);

void BM_FiguresFromStoredReport(benchmark::State& state) {
  const std::string json = PhoneReportJson();
  for (auto _ : state) {
    absl::StatusOr<report::Report> r = report::ReportFromJson(json);
    DeviceFigures f = FiguresOf(*r, kTopProcesses);
    benchmark::DoNotOptimize(f);
  }
  state.counters["report_json_bytes"] = static_cast<double>(json.size());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FiguresFromStoredReport)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace memfleet::metrics

BENCHMARK_MAIN();
