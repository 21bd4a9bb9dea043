// Test support for tests/baseline: the sample captures' expected reports (tests/data/captures/*/
// expected.json, the figures the rules of docs/accounting.md give) as DeviceSamples, and scaling of a
// report's process figures for regression sets. Header-only.
#ifndef MEMFLEET_TESTS_BASELINE_BASELINE_TEST_UTIL_H_
#define MEMFLEET_TESTS_BASELINE_BASELINE_TEST_UTIL_H_

#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "report/report_json.h"
#include "baseline/baseline_check.h"
#include "tests/support/load_tree.h"

namespace memfleet::testing {

inline report::Report ExpectedReport(const std::string& capture) {
  absl::StatusOr<report::Report> r =
      report::ReportFromJson(ReadFileForTest(TestData("captures/" + capture + "/expected.json")));
  EXPECT_TRUE(r.ok()) << capture << ": " << r.status();
  return r.ok() ? *r : report::Report();
}

inline baseline::DeviceSample Sample(const std::string& capture, const std::string& device_id, const std::string& model,
                                     const std::string& build) {
  baseline::DeviceSample s;
  s.device_id = device_id;
  s.model = model;
  s.build = build;
  s.capture_id = device_id + "-capture";
  s.captured_at = "2026-11-30T08:00:00Z";
  s.report = ExpectedReport(capture);
  return s;
}

inline void ScaleKb(report::Kb& kb, double factor) {
  if (kb) kb = static_cast<int64_t>(std::llround(static_cast<double>(*kb) * factor));
}

// Every per-process figure of `name` multiplied by `factor` (rounded to whole kB).
inline void ScaleProcess(report::Report& report, const std::string& name, double factor) {
  for (auto& [pid, p] : report.processes) {
    if (p.name != name) continue;
    for (report::Kb* kb : {&p.pss_kb, &p.swap_pss_kb, &p.gfxdev_kb, &p.gl_kb, &p.dma_kb, &p.native_graphics_kb,
                           &p.non_graphics_kb, &p.graphics_dma_kb, &p.total_kb}) {
      ScaleKb(*kb, factor);
    }
  }
}

// The spec's heaps and App Summary of the capture (expected-heaps.json) put into its report, as a capture
// with full smaps would give them.
inline void AddExpectedHeaps(report::Report& report, const std::string& capture) {
  absl::StatusOr<report::Report> with =
      report::ReportFromJson("{\"platform\":\"generic\",\"device\":{}," +
                             ReadFileForTest(TestData("captures/" + capture + "/expected-heaps.json")).substr(1));
  ASSERT_TRUE(with.ok()) << with.status();
  for (auto& [pid, p] : report.processes) {
    auto it = with->processes.find(pid);
    if (it == with->processes.end()) continue;
    p.heaps = it->second.heaps;
    p.app_summary = it->second.app_summary;
  }
}

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_BASELINE_BASELINE_TEST_UTIL_H_
