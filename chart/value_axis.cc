#include "chart/value_axis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace memfleet::chart {
namespace {

constexpr long double kKbPerMb = 1024.0L;
constexpr long double kKbPerGb = 1024.0L * 1024.0L;

struct Unit {
  long double kb;
  const char* name;
};

// The unit the largest magnitude reads best in, as FormatKbHuman chooses it.
Unit UnitFor(long double min_kb, long double max_kb) {
  const long double mag = std::max(std::fabs(min_kb), std::fabs(max_kb));
  // IEC names: these are powers of 1024 of the kernel's kB (KiB), as FormatKbHuman's.
  if (mag < kKbPerMb) return {1.0L, "kB"};
  if (mag < kKbPerGb) return {kKbPerMb, "MiB"};
  return {kKbPerGb, "GiB"};
}

// The nice step at or above `raw`, and the decimals its multiples need to read apart.
struct Step {
  long double size;
  int decimals;
};

Step NiceStepAtLeast(long double raw) {
  const long double exponent = std::floor(std::log10(raw));
  const long double base = std::pow(10.0L, exponent);
  static constexpr long double kMantissas[] = {1.0L, 2.0L, 2.5L, 5.0L, 10.0L};
  for (long double m : kMantissas) {
    if (m * base >= raw * (1 - 1e-12L)) {
      // 2.5 × 10^k has one more significant decimal than its power of ten.
      const int decimals = static_cast<int>(-exponent) + (m == 2.5L ? 1 : 0) - (m == 10.0L ? 1 : 0);
      return {m * base, std::max(0, decimals)};
    }
  }
  return {10.0L * base, std::max(0, static_cast<int>(-exponent) - 1)};
}

std::string Label(long double value_in_unit, int decimals, const char* unit) {
  char buf[96];
  // A tick at -0.0 reads as 0.
  if (std::fabs(value_in_unit) < 1e-15L) value_in_unit = 0;
  std::snprintf(buf, sizeof buf, "%.*Lf %s", decimals, value_in_unit, unit);
  return buf;
}

}  // namespace

ValueAxis NiceValueAxis(long double min_kb, long double max_kb, int max_ticks) {
  max_ticks = std::max(max_ticks, 2);
  if (max_kb < min_kb) std::swap(min_kb, max_kb);
  if (max_kb == min_kb) {
    const long double pad = std::max(1.0L, std::fabs(min_kb) * 0.05L);
    min_kb -= pad;
    max_kb += pad;
  }
  const Unit unit = UnitFor(min_kb, max_kb);
  const long double lo = min_kb / unit.kb, hi = max_kb / unit.kb;
  // kB are whole: no step below one of them.
  Step step = NiceStepAtLeast(std::max((hi - lo) / (max_ticks - 1), unit.kb == 1.0L ? 1.0L : 0.0L));
  long double first = std::floor(lo / step.size) * step.size;
  long double last = std::ceil(hi / step.size) * step.size;
  // Rounding the ends outwards can add a tick or two: widen the step until they fit.
  for (int guard = 0; guard < 8 && (last - first) / step.size + 1 > max_ticks + 1e-9L; ++guard) {
    step = NiceStepAtLeast(step.size * 1.0001L);
    first = std::floor(lo / step.size) * step.size;
    last = std::ceil(hi / step.size) * step.size;
  }
  ValueAxis axis;
  const long double count = std::round((last - first) / step.size);
  for (long double i = 0; i <= count && i <= max_ticks; ++i) {
    const long double v = first + i * step.size;
    axis.ticks_kb.push_back(v * unit.kb);
    axis.labels.push_back(Label(v, step.decimals, unit.name));
  }
  // The plot's ends are its outer ticks, exactly.
  axis.lo_kb = axis.ticks_kb.front();
  axis.hi_kb = axis.ticks_kb.back();
  return axis;
}

}  // namespace memfleet::chart
