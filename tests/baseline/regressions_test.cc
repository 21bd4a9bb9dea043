// Build-to-build regressions on a regression set built from the sample capture qcom-sm8450
// (tests/data/captures/qcom-sm8450/expected.json): eight devices of one model whose figures are the
// capture's scaled per device by 0.97, 0.98, 0.99, 1.00, 1.00, 1.01, 1.02, 1.03 — the device-to-device
// spread — on build A; build B is the same set changed as each test says.
#include "baseline/regressions.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/baseline/baseline_test_util.h"

namespace memfleet::baseline {
namespace {

constexpr char kSf[] = "/system/bin/surfaceflinger";
const std::vector<double> kSpread = {0.97, 0.98, 0.99, 1.00, 1.00, 1.01, 1.02, 1.03};

// `extra[i]` multiplies device i's factor on top of the spread.
std::vector<DeviceSample> Build(const std::string& build, const std::vector<double>& extra) {
  std::vector<DeviceSample> out;
  for (size_t i = 0; i < kSpread.size(); ++i) {
    DeviceSample s = testing::Sample("qcom-sm8450", "dev-" + std::to_string(i), "SM8450", build);
    testing::ScaleProcess(s.report, kSf, kSpread[i] * extra[i]);
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<DeviceSample> Join(std::vector<DeviceSample> a, const std::vector<DeviceSample>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

const FigureChange& Figure(const ModelComparison& m, const std::string& figure) {
  for (const FigureChange& f : m.figures) {
    if (f.figure == figure) return f;
  }
  ADD_FAILURE() << "no figure " << figure;
  static const FigureChange kNone;
  return kNone;
}

TEST(RegressionsTest, RobustStatistics) {
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(Median({}), 0);
  // |x - 2| = 1, 1, 0, 1, 98 -> median 1: the outlier does not count.
  EXPECT_DOUBLE_EQ(MedianAbsoluteDeviation({1, 3, 2, 1, 100}), 1);
  // Nearest rank: ceil(0.9 * 10) = 9th value.
  EXPECT_EQ(NearestRankP90({10, 20, 30, 40, 50, 60, 70, 80, 90, 100}), 90);
  EXPECT_EQ(NearestRankP90({5}), 5);
}

TEST(RegressionsTest, FifteenPercentGrowthOnEveryDeviceIsDetected) {
  std::vector<DeviceSample> samples =
      Join(Build("A", std::vector<double>(8, 1.0)), Build("B", std::vector<double>(8, 1.15)));
  absl::StatusOr<std::vector<ModelComparison>> r = CompareBuilds(samples, kSf, "A", "B");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 1u);
  const FigureChange& g = Figure((*r)[0], "graphics_dma_kb");
  // graphics_dma_kb 182161 on the capture. Build A: round(182161 * f) = 176696, 178518, 180339, 182161,
  // 182161, 183983, 185804, 187626; median 182161; |x - median| sorted 0, 0, 1822, 1822, 3643, 3643,
  // 5465, 5465 -> MAD 2732.5. Build B: median round(182161 * 1.15) = 209485, MAD about 1.15 * 2732.5.
  EXPECT_EQ(g.devices_a, 8u);
  EXPECT_EQ(g.devices_b, 8u);
  EXPECT_DOUBLE_EQ(g.median_a, 182161);
  EXPECT_DOUBLE_EQ(g.median_b, 209485);
  EXPECT_DOUBLE_EQ(g.delta_kb, 27324);
  // noise = 1.4826 * max(MAD_A, MAD_B) ~ 1.4826 * 3142 ~ 4659; threshold 3 * noise ~ 13976 < 27324.
  EXPECT_NEAR(g.noise_kb, 4659, 5);
  EXPECT_NEAR(g.threshold_kb, 13976, 15);
  EXPECT_TRUE(g.flagged);
  // p90 (8th of 8 by nearest rank): 187626 on A, round(182161 * 1.03 * 1.15) = 215770 on B.
  EXPECT_EQ(g.p90_a, 187626);
  EXPECT_EQ(g.p90_b, 215770);
  EXPECT_TRUE(Figure((*r)[0], "total_kb").flagged);
  EXPECT_TRUE((*r)[0].AnyFlagged());
}

TEST(RegressionsTest, OneOutlierDeviceIsNoise) {
  // Build B: the same devices, but one (a 1.00 device) shows three times its figures — a single sample.
  std::vector<double> extra(8, 1.0);
  extra[4] = 3.0;
  std::vector<DeviceSample> samples = Join(Build("A", std::vector<double>(8, 1.0)), Build("B", extra));
  absl::StatusOr<std::vector<ModelComparison>> r = CompareBuilds(samples, kSf, "A", "B");
  ASSERT_TRUE(r.ok()) << r.status();
  const FigureChange& g = Figure((*r)[0], "graphics_dma_kb");
  // B sorted: 176696, 178518, 180339, 182161, 183983, 185804, 187626, 546483 -> median
  // (182161 + 183983) / 2 = 183072: a change of 911 kB, far below the threshold (> 12000).
  EXPECT_DOUBLE_EQ(g.median_b, 183072);
  EXPECT_DOUBLE_EQ(g.delta_kb, 911);
  EXPECT_GT(g.threshold_kb, 12000);
  EXPECT_FALSE(g.flagged);
  // The p90 does see the outlier (546483), which is why it is shown but does not decide.
  EXPECT_EQ(g.p90_b, 546483);
  EXPECT_FALSE((*r)[0].AnyFlagged());
}

TEST(RegressionsTest, HalfPercentShiftIsWithinTheSpread) {
  std::vector<DeviceSample> samples =
      Join(Build("A", std::vector<double>(8, 1.0)), Build("B", std::vector<double>(8, 1.005)));
  absl::StatusOr<std::vector<ModelComparison>> r = CompareBuilds(samples, kSf, "A", "B");
  ASSERT_TRUE(r.ok());
  // 0.5% of 182161 is about 911 kB; the spread's threshold is about 12000.
  EXPECT_FALSE(Figure((*r)[0], "graphics_dma_kb").flagged);
  EXPECT_FALSE((*r)[0].AnyFlagged());
}

TEST(RegressionsTest, TooFewDevicesAreNotCompared) {
  std::vector<DeviceSample> a = Build("A", std::vector<double>(8, 1.0));
  std::vector<DeviceSample> b = Build("B", std::vector<double>(8, 2.0));
  b.resize(2);
  absl::StatusOr<std::vector<ModelComparison>> r = CompareBuilds(Join(a, b), kSf, "A", "B");
  ASSERT_TRUE(r.ok());
  const FigureChange& g = Figure((*r)[0], "graphics_dma_kb");
  EXPECT_FALSE(g.flagged);
  EXPECT_NE(g.note.find("too few devices"), std::string::npos) << g.note;
}

TEST(RegressionsTest, ModelsAreComparedSeparately) {
  std::vector<DeviceSample> samples =
      Join(Build("A", std::vector<double>(8, 1.0)), Build("B", std::vector<double>(8, 1.15)));
  for (size_t i = 0; i < samples.size(); i += 2) samples[i].model = "OTHER";
  absl::StatusOr<std::vector<ModelComparison>> r = CompareBuilds(samples, kSf, "A", "B");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].model, "OTHER");
  EXPECT_EQ((*r)[1].model, "SM8450");
  EXPECT_EQ(Figure((*r)[1], "graphics_dma_kb").devices_a, 4u);
}

// With heaps on both builds, the App Summary's parts are compared too: which part moved. Every device's
// surfaceflinger has the capture's App Summary (expected-heaps.json: native heap 30805 kB); on build B
// seven of eight devices have 12698 kB (12.4 MiB) more native heap.
TEST(RegressionsTest, AppSummaryPartsSayWhichPartMoved) {
  std::vector<DeviceSample> a = Build("A", std::vector<double>(8, 1.0));
  std::vector<DeviceSample> b = Build("B", std::vector<double>(8, 1.0));
  for (DeviceSample& s : a) testing::AddExpectedHeaps(s.report, "qcom-sm8450");
  for (size_t i = 0; i < b.size(); ++i) {
    testing::AddExpectedHeaps(b[i].report, "qcom-sm8450");
    if (i < 7) b[i].report.processes.at(6225).app_summary->native_heap_kb += 12698;
  }
  absl::StatusOr<std::vector<ModelComparison>> r = CompareBuilds(Join(a, b), kSf, "A", "B");
  ASSERT_TRUE(r.ok()) << r.status();
  const FigureChange& native = Figure((*r)[0], "app_summary.native_heap_kb");
  // A: 30805 on every device (MAD 0); B sorted: 30805, then 43503 x 7: median 43503, MAD 0. Noise 0, so
  // the 1024 kB floor is the threshold; the change is 12698.
  EXPECT_DOUBLE_EQ(native.median_a, 30805);
  EXPECT_DOUBLE_EQ(native.median_b, 43503);
  EXPECT_DOUBLE_EQ(native.threshold_kb, 1024);
  EXPECT_TRUE(native.flagged);
  EXPECT_EQ(native.devices_moved, 7u);
  const FigureChange& java = Figure((*r)[0], "app_summary.java_heap_kb");
  EXPECT_FALSE(java.flagged);
  EXPECT_EQ(java.devices_moved, 0u);
  // Without heaps on build A there is nothing to compare them with: no App Summary rows at all.
  std::vector<DeviceSample> plain = Build("A", std::vector<double>(8, 1.0));
  absl::StatusOr<std::vector<ModelComparison>> none = CompareBuilds(Join(plain, b), kSf, "A", "B");
  ASSERT_TRUE(none.ok());
  for (const FigureChange& f : (*none)[0].figures) EXPECT_EQ(f.figure.rfind("app_summary.", 0), std::string::npos);
}

// The same model's devices reporting the process in two tiers (build B's phones lost root: their agent reads
// as shell, and their figures are dumpsys' TOTAL PSS, memtrack included, half as much again) are two
// comparisons that share no figure: a tier change is never a regression.
TEST(RegressionsTest, FiguresOfTwoTiersAreNeverCompared) {
  std::vector<DeviceSample> b = Build("B", std::vector<double>(8, 1.0));
  for (DeviceSample& s : b) {
    for (auto& [pid, p] : s.report.processes) {
      if (p.name != kSf) continue;
      report::ProcessReport dumpsys;
      dumpsys.pid = p.pid;
      dumpsys.name = p.name;
      dumpsys.tier = report::kTierDumpsys;
      dumpsys.total_kb = *p.total_kb * 3 / 2;
      p = dumpsys;
    }
  }
  absl::StatusOr<std::vector<ModelComparison>> r =
      CompareBuilds(Join(Build("A", std::vector<double>(8, 1.0)), b), kSf, "A", "B");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].model, "SM8450");
  EXPECT_EQ((*r)[0].tier, "kernel");
  EXPECT_EQ((*r)[1].model, "SM8450");
  EXPECT_EQ((*r)[1].tier, "dumpsys");
  EXPECT_EQ(Figure((*r)[0], "total_kb").devices_a, 8u);
  EXPECT_EQ(Figure((*r)[0], "total_kb").devices_b, 0u);
  EXPECT_EQ(Figure((*r)[1], "total_kb").devices_a, 0u);
  EXPECT_EQ(Figure((*r)[1], "total_kb").devices_b, 8u);
  EXPECT_EQ(Figure((*r)[1], "graphics_dma_kb").note, "the figure is unknown on every device");
  EXPECT_FALSE((*r)[0].AnyFlagged());
  EXPECT_FALSE((*r)[1].AnyFlagged());
}

TEST(RegressionsTest, BadArguments) {
  EXPECT_EQ(CompareBuilds({}, "", "A", "B").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CompareBuilds({}, kSf, "A", "A").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CompareBuilds({}, kSf, "", "B").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(CompareBuilds({}, kSf, "A", "B")->empty());
}

}  // namespace
}  // namespace memfleet::baseline
