// The value axis of a chart: a range that covers the data and ends on ticks at "nice" steps (1, 2,
// 2.5 or 5 × 10^k of the unit), with labels in kB, MB or GB and just enough decimals that no two
// ticks read the same. Pure.
//
//   ValueAxis axis = NiceValueAxis(29050 * 1024.0L / 1000, 29150 * 1024.0L / 1000);
//   // axis.labels: "29.76 MB", "29.78 MB", ... — never two "29.1 MB"
#ifndef MEMFLEET_CHART_VALUE_AXIS_H_
#define MEMFLEET_CHART_VALUE_AXIS_H_

#include <string>
#include <vector>

namespace memfleet::chart {

struct ValueAxis {
  long double lo_kb = 0;  // bottom of the plot: the first tick, at or below the smallest value
  long double hi_kb = 1;  // top of the plot: the last tick, at or above the largest value
  std::vector<long double> ticks_kb;
  std::vector<std::string> labels;  // one per tick
};

// At most `max_ticks` ticks (at least 2) over [min_kb, max_kb]. An empty range is widened by a few
// percent first, so a flat series draws through the middle.
ValueAxis NiceValueAxis(long double min_kb, long double max_kb, int max_ticks = 6);

}  // namespace memfleet::chart

#endif  // MEMFLEET_CHART_VALUE_AXIS_H_
