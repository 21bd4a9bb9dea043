#include "chart/time_axis.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/status/statusor.h"
#include "chart/figure_text.h"

namespace memfleet::chart {
namespace {

constexpr long double kMinute = 60, kHour = 3600, kDay = 86400;
constexpr long double kSteps[] = {kMinute,      2 * kMinute, 5 * kMinute, 10 * kMinute, 15 * kMinute,
                                  30 * kMinute, kHour,       2 * kHour,   3 * kHour,    6 * kHour,
                                  12 * kHour,   kDay,        2 * kDay,    7 * kDay,     14 * kDay,
                                  30 * kDay,    60 * kDay,   90 * kDay,   180 * kDay,   365 * kDay};

// How many multiples of `step` lie within [lo, hi].
long double TickCount(long double lo, long double hi, long double step) {
  return std::floor(hi / step) - std::ceil(lo / step) + 1;
}

long double StepFor(long double lo, long double hi, int max_ticks) {
  for (long double step : kSteps) {
    if (TickCount(lo, hi, step) <= max_ticks) return step;
  }
  // Beyond the table (centuries of range, or nonsense times): tens of years, then hundreds...
  long double step = 3650 * kDay;
  while (TickCount(lo, hi, step) > max_ticks && std::isfinite(step)) step *= 10;
  return step;
}

std::string Label(long double t_s, long double step_s, long double span_s) {
  // Far outside years 0000..9999 the cast itself would overflow; FormatUtc refuses the rest.
  if (std::fabs(t_s) > 1e15L) return "?";
  absl::StatusOr<std::string> t = FormatUtc(static_cast<int64_t>(t_s));
  if (!t.ok()) return "?";
  // t: YYYY-MM-DDTHH:MM:SSZ
  if (step_s >= kDay) return t->substr(0, 10);
  if (span_s <= kHour) return t->substr(11, 5);
  return t->substr(5, 5) + " " + t->substr(11, 5);
}

}  // namespace

TimeAxis NiceTimeAxis(int64_t min_s, int64_t max_s, int max_ticks) {
  TimeAxis axis;
  axis.lo_s = static_cast<long double>(min_s);
  axis.hi_s = static_cast<long double>(max_s);
  if (axis.hi_s - axis.lo_s < kMinTimeSpanS) {
    const long double middle = (axis.lo_s + axis.hi_s) / 2;
    axis.lo_s = middle - kMinTimeSpanS / 2.0L;
    axis.hi_s = middle + kMinTimeSpanS / 2.0L;
  }
  const long double step = StepFor(axis.lo_s, axis.hi_s, std::max(max_ticks, 2));
  const long double span = axis.hi_s - axis.lo_s;
  for (long double t = std::ceil(axis.lo_s / step) * step; t <= axis.hi_s && axis.ticks_s.size() < 64; t += step) {
    axis.ticks_s.push_back(t);
    axis.labels.push_back(Label(t, step, span));
  }
  return axis;
}

}  // namespace memfleet::chart
