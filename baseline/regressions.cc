#include "baseline/regressions.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "report/report.h"

namespace memfleet::baseline {

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

double MedianAbsoluteDeviation(const std::vector<double>& values) {
  double m = Median(values);
  std::vector<double> dev;
  dev.reserve(values.size());
  for (double v : values) dev.push_back(std::fabs(v - m));
  return Median(std::move(dev));
}

int64_t NearestRankP90(std::vector<int64_t> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  // Nearest rank: the smallest value with at least 90% of the values at or below it.
  size_t rank = (values.size() * 90 + 99) / 100;
  return values[std::max<size_t>(rank, 1) - 1];
}

std::vector<std::string> RegressionOptions::DefaultBreakdownFigures() {
  std::vector<std::string> figures;
  for (size_t i = 0; i < report::kAppSummaryParts; ++i) {
    figures.push_back(absl::StrCat("app_summary.", report::kAppSummaryFields[i].name));
  }
  return figures;
}

bool ModelComparison::AnyFlagged() const {
  return std::any_of(figures.begin(), figures.end(), [](const FigureChange& f) { return f.flagged; });
}

absl::StatusOr<std::vector<ModelComparison>> CompareBuilds(const std::vector<DeviceSample>& samples,
                                                           const std::string& process, const std::string& build_a,
                                                           const std::string& build_b,
                                                           const RegressionOptions& options) {
  if (process.empty()) return absl::InvalidArgumentError("name the process (--process NAME)");
  if (build_a.empty() || build_b.empty()) return absl::InvalidArgumentError("name both builds (--build A --vs B)");
  if (build_a == build_b) {
    return absl::InvalidArgumentError(absl::StrCat("--build and --vs are the same build \"", build_a, "\""));
  }
  // (model, of the dumpsys tier) -> figure -> build (0: A, 1: B) -> values, one per device; the kernel
  // tier sorts first.
  std::map<std::pair<std::string, bool>, std::map<std::string, std::array<std::vector<int64_t>, 2>>> values;
  for (const DeviceSample& s : samples) {
    int side = s.build == build_a ? 0 : s.build == build_b ? 1 : -1;
    if (side < 0) continue;
    const std::pair<std::string, bool> key{s.model, OfDumpsysTier(s.report, process)};
    for (const std::vector<std::string>* list : {&options.figures, &options.breakdown_figures}) {
      for (const std::string& figure : *list) {
        bool unknown = false;
        std::optional<int64_t> v = ProcessFigure(s.report, process, figure, &unknown);
        if (v) values[key][figure][side].push_back(*v);
      }
    }
  }
  std::vector<ModelComparison> out;
  for (auto& [model_tier, by_figure] : values) {
    ModelComparison mc;
    mc.model = model_tier.first;
    mc.tier = model_tier.second ? report::kTierDumpsys : report::kTierKernel;
    std::vector<std::string> figures = options.figures;
    for (const std::string& figure : options.breakdown_figures) {
      auto it = by_figure.find(figure);
      // Only where both builds have it: otherwise there is nothing to say about that part.
      if (it != by_figure.end() && !it->second[0].empty() && !it->second[1].empty()) figures.push_back(figure);
    }
    for (const std::string& figure : figures) {
      FigureChange f;
      f.figure = figure;
      auto it = by_figure.find(figure);
      if (it != by_figure.end()) {
        const std::vector<int64_t>& a = it->second[0];
        const std::vector<int64_t>& b = it->second[1];
        std::vector<double> da(a.begin(), a.end());
        std::vector<double> db(b.begin(), b.end());
        f.devices_a = static_cast<uint32_t>(a.size());
        f.devices_b = static_cast<uint32_t>(b.size());
        f.median_a = Median(da);
        f.median_b = Median(db);
        f.p90_a = NearestRankP90(a);
        f.p90_b = NearestRankP90(b);
        f.delta_kb = f.median_b - f.median_a;
        f.noise_kb = 1.4826 * std::max(MedianAbsoluteDeviation(da), MedianAbsoluteDeviation(db));
        f.threshold_kb = std::max(options.k * f.noise_kb, static_cast<double>(options.floor_kb));
        if (f.devices_a < options.min_devices || f.devices_b < options.min_devices) {
          f.note = absl::StrCat("too few devices (", f.devices_a, " on ", build_a, ", ", f.devices_b, " on ", build_b,
                                "; need ", options.min_devices, " each)");
        } else {
          f.flagged = std::fabs(f.delta_kb) > f.threshold_kb;
        }
        for (int64_t v : b) {
          const double beyond = static_cast<double>(v) - f.median_a;
          f.devices_moved += std::fabs(beyond) > f.threshold_kb && (beyond > 0) == (f.delta_kb > 0);
        }
      } else {
        f.note = "the figure is unknown on every device";
      }
      mc.figures.push_back(std::move(f));
    }
    out.push_back(std::move(mc));
  }
  return out;
}

}  // namespace memfleet::baseline
