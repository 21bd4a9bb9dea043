// Build-to-build regressions of one process: its figures' distributions across the devices of a model
// on build A and on build B (median and p90), and a change flagged only when it is larger than the
// device-to-device noise (docs/baselines.md "Regressions").
//
//   RegressionOptions o;   // k = 3, floor 1024 kB, at least 3 devices per build
//   std::vector<ModelComparison> r = CompareBuilds(samples, "/system/bin/surfaceflinger", "A", "B", o);
//
// The rule, per figure, with x the per-device values (the sum over the process's instances):
//   noise   = 1.4826 * max(MAD_A, MAD_B)           (MAD = median |x - median|; 1.4826 MAD estimates a
//                                                   standard deviation and ignores single outliers)
//   flagged = n_A >= min_devices and n_B >= min_devices and
//             |median_B - median_A| > max(k * noise, floor_kb)
// A single device with a wild value moves neither median nor MAD much, so it cannot flag a change.
#ifndef MEMFLEET_BASELINE_REGRESSIONS_H_
#define MEMFLEET_BASELINE_REGRESSIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "baseline/baseline_check.h"

namespace memfleet::baseline {

struct RegressionOptions {
  double k = 3.0;
  int64_t floor_kb = 1024;
  uint32_t min_devices = 3;
  // The figures compared, in this order.
  std::vector<std::string> figures = {"total_kb", "non_graphics_kb", "graphics_dma_kb",
                                      "gl_kb",    "dma_kb",          "native_graphics_kb"};
  // Compared after them where both builds have them (captures with full smaps): which part of the
  // process moved (docs/accounting.md section 8). Default: the seven parts of the App Summary.
  std::vector<std::string> breakdown_figures = DefaultBreakdownFigures();
  static std::vector<std::string> DefaultBreakdownFigures();
};

struct FigureChange {
  std::string figure;
  uint32_t devices_a = 0;
  uint32_t devices_b = 0;
  double median_a = 0;  // medians of an even count are the mean of the two middle values
  double median_b = 0;
  int64_t p90_a = 0;  // nearest rank
  int64_t p90_b = 0;
  double noise_kb = 0;
  double threshold_kb = 0;
  double delta_kb = 0;  // median_b - median_a
  // Devices of build B whose value is beyond A's median by more than the threshold, the way the
  // medians moved ("native heap +12.4 MB on 5 of 6 devices").
  uint32_t devices_moved = 0;
  bool flagged = false;
  std::string note;  // why not compared ("too few devices on build B (2 < 3)"), else ""
};

struct ModelComparison {
  std::string model;
  // The tier of the process's figures in these reports (docs/accounting.md section 9): "kernel" or
  // "dumpsys". Figures of two tiers are never compared with each other: a model whose devices report
  // the process in both gets one comparison per tier.
  std::string tier = report::kTierKernel;
  std::vector<FigureChange> figures;
  bool AnyFlagged() const;
};

// Robust statistics, exposed for tests. `values` need not be sorted; empty gives 0.
double Median(std::vector<double> values);
double MedianAbsoluteDeviation(const std::vector<double>& values);
int64_t NearestRankP90(std::vector<int64_t> values);

// One comparison per model and tier that has the process on build A or build B (models in name order,
// the kernel tier first within a model).
// InvalidArgument when process, build_a or build_b is empty or the builds are the same.
absl::StatusOr<std::vector<ModelComparison>> CompareBuilds(const std::vector<DeviceSample>& samples,
                                                           const std::string& process, const std::string& build_a,
                                                           const std::string& build_b,
                                                           const RegressionOptions& options = {});

}  // namespace memfleet::baseline

#endif  // MEMFLEET_BASELINE_REGRESSIONS_H_
