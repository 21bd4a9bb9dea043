// The time axis of a chart: a range of at least kMinTimeSpanS around the samples, and ticks on round
// UTC times (whole minutes, hours or days, by the span) labelled with those times. Pure.
//
//   TimeAxis axis = NiceTimeAxis(1796220000, 1796227200);   // 14:00 .. 16:00 UTC
//   // axis.ticks_s: 14:00, 14:30, 15:00, 15:30, 16:00; axis.labels: "12-02 14:00", ...
#ifndef MEMFLEET_CHART_TIME_AXIS_H_
#define MEMFLEET_CHART_TIME_AXIS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace memfleet::chart {

// The shortest span a time axis shows. Samples closer together than this stay close together on the
// chart, instead of being stretched across it (two captures a second apart are not a whole chart wide),
// and the ticks still fall on whole minutes.
inline constexpr int64_t kMinTimeSpanS = 600;

struct TimeAxis {
  long double lo_s = 0;              // the left edge of the plot, at or before the first sample
  long double hi_s = 1;              // the right edge, at or after the last sample
  std::vector<long double> ticks_s;  // round UTC times within [lo_s, hi_s], ascending
  std::vector<std::string> labels;   // one per tick
};

// At most `max_ticks` ticks over the samples' range [min_s, max_s], a whole number of steps of 1, 2, 5,
// 10, 15 or 30 minutes, 1, 2, 3, 6 or 12 hours, or 1, 2, 7, 14, 30, 60, 90, 180 or 365 days (and
// multiples of ten of the year beyond), counted from 1970-01-01T00:00:00Z: so a tick is on a whole
// minute, hour or UTC midnight. A range shorter than kMinTimeSpanS is widened about its middle. Labels
// are "16:15" within an hour, "12-02 16:15" for steps under a day, "2026-12-02" for steps of days.
TimeAxis NiceTimeAxis(int64_t min_s, int64_t max_s, int max_ticks = 6);

}  // namespace memfleet::chart

#endif  // MEMFLEET_CHART_TIME_AXIS_H_
