#include "chart/chart.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>

#include "chart/figure_text.h"
#include "chart/time_axis.h"
#include "chart/value_axis.h"

namespace memfleet::chart {
namespace {

constexpr const char* kBlocks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// About half the width of the widest time label ("12-02 16:15" at 12 px): a tick closer to an end than
// this has its label anchored inwards.
constexpr double kHalfTimeLabelPx = 40;

// Captures at most this far apart are one moment for the line (a sweep's capture and a periodic one
// taken 0.5 s apart land in the same or the next whole second).
constexpr long double kSameMomentS = 1;

// The samples the line goes through: of a run of samples within kSameMomentS of the run's first, only
// the last (the newest figure of that moment). Drawn through every one, a run would be a vertical wall
// on any span longer than a few seconds; each sample keeps its own dot.
std::vector<size_t> LineVertices(const std::vector<int64_t>& times) {
  std::vector<size_t> vertices;
  size_t run_start = 0;
  for (size_t i = 0; i < times.size(); ++i) {
    const long double since_run = static_cast<long double>(times[i]) - static_cast<long double>(times[run_start]);
    if (i > 0 && since_run >= 0 && since_run <= kSameMomentS) {
      vertices.back() = i;
    } else {
      vertices.push_back(i);
      run_start = i;
    }
  }
  return vertices;
}

// The chart's frame over a time range and a value range: the document head, title, value grid and
// labels, time ticks and labels, and the axes; the series are drawn into it.
struct Frame {
  double width = 0, height = 0, left = 90, right = 24, top = 44, bottom = 56, plot_w = 0, plot_h = 0;
  long double vmin = 0, vmax = 1, tmin = 0, tmax = 1;
  double x_of(long double t) const { return left + static_cast<double>((t - tmin) / (tmax - tmin)) * plot_w; }
  double y_of(long double v) const { return top + plot_h - static_cast<double>((v - vmin) / (vmax - vmin)) * plot_h; }
};

// `times` and the value range [v_lo, v_hi] of what will be drawn; the opening of the SVG document up to
// the axes in *svg.
Frame OpenFrame(const std::vector<int64_t>& times, int64_t v_lo, int64_t v_hi, const ChartOptions& options,
                std::string* svg) {
  Frame f;
  f.width = std::max(options.width_px, 200);
  f.height = std::max(options.height_px, 120);
  f.plot_w = f.width - f.left - f.right;
  f.plot_h = f.height - f.top - f.bottom;
  int64_t t_lo = 0, t_hi = 0;
  for (size_t i = 0; i < times.size(); ++i) {
    if (i == 0 || times[i] < t_lo) t_lo = times[i];
    if (i == 0 || times[i] > t_hi) t_hi = times[i];
  }
  // Nice ticks at both ends: a flat series is widened and draws through the middle.
  const ValueAxis axis = NiceValueAxis(v_lo, v_hi);
  f.vmin = axis.lo_kb;
  f.vmax = axis.hi_kb;
  // Ticks on round times; samples close in time are drawn close, not a chart's width apart.
  const TimeAxis time_axis = NiceTimeAxis(t_lo, t_hi);
  f.tmin = time_axis.lo_s;
  f.tmax = time_axis.hi_s;
  const double width = f.width, height = f.height, left = f.left, top = f.top, plot_w = f.plot_w, plot_h = f.plot_h;
  auto y_of = [&](long double v) { return f.y_of(v); };
  std::string& s = *svg;
  s += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  s += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Num(width) + "\" height=\"" + Num(height) +
       "\" viewBox=\"0 0 " + Num(width) + " " + Num(height) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s += "  <title>" + XmlEscape(options.title) + "</title>\n";
  s += "  <rect x=\"0\" y=\"0\" width=\"" + Num(width) + "\" height=\"" + Num(height) + "\" fill=\"white\"/>\n";
  s += "  <text x=\"" + Num(width / 2) + "\" y=\"24\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">" +
       XmlEscape(options.title) + "</text>\n";

  // Value axis: a labelled grid line per tick.
  s += "  <g class=\"y-axis\" fill=\"#333\" stroke=\"none\">\n";
  for (size_t i = 0; i < axis.ticks_kb.size(); ++i) {
    double y = y_of(axis.ticks_kb[i]);
    s += "    <line x1=\"" + Num(left) + "\" y1=\"" + Num(y) + "\" x2=\"" + Num(left + plot_w) + "\" y2=\"" + Num(y) +
         "\" stroke=\"#e0e0e0\"/>\n";
    s += "    <text x=\"" + Num(left - 8) + "\" y=\"" + Num(y + 4) + "\" text-anchor=\"end\">" +
         XmlEscape(axis.labels[i]) + "</text>\n";
  }
  s += "    <text x=\"16\" y=\"" + Num(top + plot_h / 2) + "\" text-anchor=\"middle\" transform=\"rotate(-90 16 " +
       Num(top + plot_h / 2) + ")\">" + XmlEscape(options.value_label) + "</text>\n";
  s += "  </g>\n";

  // Time axis: a labelled tick on each round time.
  s += "  <g class=\"x-axis\" fill=\"#333\" stroke=\"none\">\n";
  for (size_t i = 0; times.size() > 0 && i < time_axis.ticks_s.size(); ++i) {
    const double x = f.x_of(time_axis.ticks_s[i]);
    s += "    <line x1=\"" + Num(x) + "\" y1=\"" + Num(top + plot_h) + "\" x2=\"" + Num(x) + "\" y2=\"" +
         Num(top + plot_h + 5) + "\" stroke=\"#333\"/>\n";
    // A label near an end is anchored inwards, so that it does not run past the edge of the image.
    const char* anchor = x - left < kHalfTimeLabelPx            ? "start"
                         : left + plot_w - x < kHalfTimeLabelPx ? "end"
                                                                : "middle";
    s += "    <text x=\"" + Num(x) + "\" y=\"" + Num(top + plot_h + 20) + "\" text-anchor=\"" + anchor + "\">" +
         XmlEscape(time_axis.labels[i]) + "</text>\n";
  }
  s += "    <text x=\"" + Num(left + plot_w / 2) + "\" y=\"" + Num(height - 10) +
       "\" text-anchor=\"middle\">time (UTC)</text>\n";
  s += "  </g>\n";

  s += "  <line class=\"axis\" x1=\"" + Num(left) + "\" y1=\"" + Num(top) + "\" x2=\"" + Num(left) + "\" y2=\"" +
       Num(top + plot_h) + "\" stroke=\"#333\"/>\n";
  s += "  <line class=\"axis\" x1=\"" + Num(left) + "\" y1=\"" + Num(top + plot_h) + "\" x2=\"" + Num(left + plot_w) +
       "\" y2=\"" + Num(top + plot_h) + "\" stroke=\"#333\"/>\n";
  return f;
}

}  // namespace

std::string Sparkline(const std::vector<std::optional<int64_t>>& values) {
  bool any = false;
  int64_t lo = 0, hi = 0;
  for (const auto& v : values) {
    if (!v) continue;
    if (!any || *v < lo) lo = *v;
    if (!any || *v > hi) hi = *v;
    any = true;
  }
  std::string out;
  for (const auto& v : values) {
    if (!v) {
      out += ' ';
    } else if (hi == lo) {
      out += kBlocks[3];
    } else {
      // long double: hi - lo may not fit in int64.
      long double frac = (static_cast<long double>(*v) - lo) / (static_cast<long double>(hi) - lo);
      int level = static_cast<int>(frac * 7.0L + 0.5L);
      out += kBlocks[std::clamp(level, 0, 7)];
    }
  }
  return out;
}

std::string XmlEscape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // Control characters other than tab/newline are not allowed in XML 1.0 at all.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') {
          out += ' ';
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string RenderSvgLineChart(const std::vector<ChartPoint>& points, const ChartOptions& options) {
  std::vector<int64_t> times;
  int64_t v_lo = 0, v_hi = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    times.push_back(points[i].time_unix_s);
    if (i == 0 || points[i].value_kb < v_lo) v_lo = points[i].value_kb;
    if (i == 0 || points[i].value_kb > v_hi) v_hi = points[i].value_kb;
  }
  std::string s;
  const Frame frame = OpenFrame(times, v_lo, v_hi, options, &s);
  auto x_of = [&](int64_t t) { return frame.x_of(t); };
  auto y_of = [&](long double v) { return frame.y_of(v); };

  std::string coords;
  for (size_t i : LineVertices(times)) {
    if (!coords.empty()) coords += ' ';
    coords += Num(x_of(points[i].time_unix_s)) + "," + Num(y_of(points[i].value_kb));
  }
  s += "  <polyline class=\"series\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"" + coords + "\"/>\n";
  s += "  <g class=\"samples\" fill=\"#1f77b4\">\n";
  for (const ChartPoint& p : points) {
    absl::StatusOr<std::string> when = FormatUtc(p.time_unix_s);
    s += "    <circle cx=\"" + Num(x_of(p.time_unix_s)) + "\" cy=\"" + Num(y_of(p.value_kb)) + "\" r=\"3\"><title>" +
         XmlEscape((when.ok() ? *when : std::string("?")) + ": " + FormatKb(p.value_kb) + " kB") +
         "</title></circle>\n";
  }
  s += "  </g>\n";
  s += "</svg>\n";
  return s;
}

std::string RenderSvgStackedChart(const std::vector<StackedPoint>& points, const std::vector<std::string>& series,
                                  const ChartOptions& options) {
  static constexpr const char* kColours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                             "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  // tops[i][j]: the top of series j at point i (the running sum, negatives as 0).
  std::vector<std::vector<int64_t>> tops(points.size(), std::vector<int64_t>(series.size(), 0));
  std::vector<int64_t> times;
  int64_t v_hi = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    times.push_back(points[i].time_unix_s);
    int64_t sum = 0;
    for (size_t j = 0; j < series.size(); ++j) {
      const int64_t v = j < points[i].values_kb.size() ? std::max<int64_t>(points[i].values_kb[j], 0) : 0;
      sum = __builtin_add_overflow(sum, v, &sum) ? std::numeric_limits<int64_t>::max() : sum;
      tops[i][j] = sum;
    }
    v_hi = std::max(v_hi, sum);
  }
  std::string s;
  const Frame frame = OpenFrame(times, 0, v_hi, options, &s);
  const std::vector<size_t> vertices = LineVertices(times);
  for (size_t j = 0; j < series.size(); ++j) {
    // Along the top of this layer, then back along the top of the one below it.
    std::string polygon;
    for (size_t i : vertices) polygon += Num(frame.x_of(times[i])) + "," + Num(frame.y_of(tops[i][j])) + " ";
    for (size_t k = vertices.size(); k-- > 0;) {
      const size_t i = vertices[k];
      polygon += Num(frame.x_of(times[i])) + "," + Num(frame.y_of(j == 0 ? 0 : tops[i][j - 1])) + " ";
    }
    if (!polygon.empty()) polygon.pop_back();
    s += "  <polygon class=\"layer\" data-series=\"" + XmlEscape(series[j]) + "\" fill=\"" +
         kColours[j % (sizeof kColours / sizeof kColours[0])] + "\" fill-opacity=\"0.75\" stroke=\"none\" points=\"" +
         polygon + "\"/>\n";
  }
  s += "  <g class=\"samples\" fill=\"#333\">\n";
  for (size_t i = 0; i < points.size(); ++i) {
    absl::StatusOr<std::string> when = FormatUtc(times[i]);
    std::string title = when.ok() ? *when : std::string("?");
    for (size_t j = 0; j < series.size(); ++j) {
      const int64_t v = j < points[i].values_kb.size() ? points[i].values_kb[j] : 0;
      title += "; " + series[j] + " " + FormatKb(v) + " kB";
    }
    s += "    <circle cx=\"" + Num(frame.x_of(times[i])) + "\" cy=\"" +
         Num(frame.y_of(series.empty() ? 0 : tops[i].back())) + "\" r=\"2\"><title>" + XmlEscape(title) +
         "</title></circle>\n";
  }
  s += "  </g>\n";
  // The legend, top layer first as the eye reads the stack, along the top edge of the plot.
  s += "  <g class=\"legend\" font-size=\"11\">\n";
  double x = frame.left;
  for (size_t j = series.size(); j-- > 0;) {
    s += "    <rect x=\"" + Num(x) + "\" y=\"31\" width=\"10\" height=\"10\" fill=\"" +
         kColours[j % (sizeof kColours / sizeof kColours[0])] + "\"/>\n";
    s += "    <text x=\"" + Num(x + 13) + "\" y=\"40\">" + XmlEscape(series[j]) + "</text>\n";
    x += 26 + 6.5 * static_cast<double>(series[j].size());
  }
  s += "  </g>\n";
  s += "</svg>\n";
  return s;
}

}  // namespace memfleet::chart
