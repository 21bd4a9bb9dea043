// Charts of a figure over time: a one-line terminal sparkline and a self-contained SVG line chart
// (`memfleet trend --svg FILE`). Pure text out, no I/O.
//
//   Sparkline({10, 20, 80});                          // "▁▂█"
//   std::string svg = RenderSvgLineChart(points, {.title = "surfaceflinger total_kb on pixel-1"});
#ifndef MEMFLEET_CHART_CHART_H_
#define MEMFLEET_CHART_CHART_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memfleet::chart {

// One block character (▁▂▃▄▅▆▇█) per value, scaled so the smallest is ▁ and the largest █. With no
// spread (all values equal, or one value) every block is ▄: a flat line, neither "low" nor "high".
// An unknown value is a space, so the blocks stay aligned with the samples.
std::string Sparkline(const std::vector<std::optional<int64_t>>& values);

struct ChartPoint {
  int64_t time_unix_s = 0;
  int64_t value_kb = 0;
};

struct ChartOptions {
  std::string title;
  std::string value_label = "kB";  // the y axis caption
  int width_px = 800;
  int height_px = 360;
};

// An SVG document: title, axes with value labels (KiB/MiB/GiB) and UTC time labels on round times
// (chart/time_axis.h), a light grid, the series as one <polyline> with one point per ChartPoint (in the
// order given, oldest first) and a dot per point. Points at most a second apart are one moment for the
// line: it goes through the last of them only, so close captures draw no vertical wall; each keeps its
// dot. Text is XML-escaped; times or values that are all equal still draw (the range is widened).
std::string RenderSvgLineChart(const std::vector<ChartPoint>& points, const ChartOptions& options);

// One time of a stacked chart: a value per series, in the order of the series (bottom first).
struct StackedPoint {
  int64_t time_unix_s = 0;
  std::vector<int64_t> values_kb;
};

// An SVG document of stacked areas over time, in the frame of RenderSvgLineChart: series i is a filled
// polygon (class "layer", data-series="<name>") laid on series 0..i-1 (points a second apart are one
// moment, as in RenderSvgLineChart), a legend names each in its
// colour, and each point of the top edge is a dot titled with its time and every series' value. A
// negative value (a part that is a difference) stacks as 0; a point with fewer values than series has 0
// for the rest.
std::string RenderSvgStackedChart(const std::vector<StackedPoint>& points, const std::vector<std::string>& series,
                                  const ChartOptions& options);

// & < > " ' as XML entities.
std::string XmlEscape(std::string_view text);

}  // namespace memfleet::chart

#endif  // MEMFLEET_CHART_CHART_H_
