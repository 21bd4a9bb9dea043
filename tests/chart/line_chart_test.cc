// The SVG line chart's time axis as drawn: close captures stay close and draw no vertical wall, and the
// tick labels are round times.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "chart/chart.h"

namespace memfleet::chart {
namespace {

constexpr int64_t k0800 = 1796198400;  // 2026-12-02T08:00:00Z

// The value of each `attribute="..."` of the document's `element`s, in order.
std::vector<std::string> Attributes(const std::string& svg, const std::string& element, const std::string& attribute) {
  std::vector<std::string> out;
  for (size_t at = svg.find("<" + element + " "); at != std::string::npos; at = svg.find("<" + element + " ", at + 1)) {
    const size_t end = svg.find('>', at);
    const size_t value = svg.find(" " + attribute + "=\"", at);
    if (value == std::string::npos || value > end) continue;
    const size_t start = value + attribute.size() + 3;
    out.push_back(svg.substr(start, svg.find('"', start) - start));
  }
  return out;
}

std::vector<std::pair<double, double>> LinePoints(const std::string& svg) {
  std::vector<std::pair<double, double>> xy;
  const std::vector<std::string> lines = Attributes(svg, "polyline", "points");
  if (lines.size() != 1) return xy;
  const char* p = lines[0].c_str();
  while (*p != '\0') {
    char* end = nullptr;
    const double x = std::strtod(p, &end);
    const double y = std::strtod(end + 1, &end);
    xy.emplace_back(x, y);
    p = end;
    while (*p == ' ') ++p;
  }
  return xy;
}

std::vector<std::string> TimeLabels(const std::string& svg) {
  std::vector<std::string> labels;
  const size_t axis = svg.find("<g class=\"x-axis\"");
  const size_t axis_end = svg.find("</g>", axis);
  for (size_t at = svg.find("<text ", axis); at < axis_end; at = svg.find("<text ", at + 1)) {
    const size_t start = svg.find('>', at) + 1;
    labels.push_back(svg.substr(start, svg.find('<', start) - start));
  }
  return labels;
}

// Two captures 0.5 s apart (08:00:00.7 and 08:00:01.2, so whole seconds 0 and 1) were a chart's width
// apart with five labels of one second; in one second they were a vertical line through the middle.
TEST(LineChartTest, CapturesASecondApartDrawNoWall) {
  for (int64_t second : {k0800, k0800 + 1}) {
    const std::string svg = RenderSvgLineChart({{k0800, 3500000}, {second, 3600000}}, {"close", "kB"});
    const std::vector<std::string> cx = Attributes(svg, "circle", "cx");
    ASSERT_EQ(cx.size(), 2u) << "each capture keeps its dot";
    EXPECT_LT(std::abs(std::strtod(cx[1].c_str(), nullptr) - std::strtod(cx[0].c_str(), nullptr)), 2.0)
        << "a second is a second, not the chart's width";
    const auto line = LinePoints(svg);
    ASSERT_EQ(line.size(), 1u) << "one moment, one vertex: no segment between the two";
    EXPECT_EQ(line[0].first, std::strtod(cx[1].c_str(), nullptr)) << "through the newer capture";
    EXPECT_EQ(TimeLabels(svg).back(), "time (UTC)");
    EXPECT_GE(TimeLabels(svg).size(), 3u) << "at least two ticks over ten minutes";
  }
}

// With a capture half an hour later, the line runs from the newer of the close pair to it: two vertices,
// the first a second after the pair's first capture.
TEST(LineChartTest, AClosePairIsOneVertexOfALongerLine) {
  const std::string svg =
      RenderSvgLineChart({{k0800, 3500000}, {k0800 + 1, 3600000}, {k0800 + 1800, 3550000}}, {"pair", "kB"});
  const auto line = LinePoints(svg);
  ASSERT_EQ(line.size(), 2u) << svg;
  EXPECT_GT(line[1].first - line[0].first, 300) << "half an hour apart on a half-hour axis";
  EXPECT_EQ(Attributes(svg, "circle", "cx").size(), 3u);
}

// Samples at arbitrary seconds (08:03:17 to 10:41:09): every tick label is a whole half hour.
TEST(LineChartTest, TimeLabelsAreRoundTimes) {
  const std::string svg = RenderSvgLineChart(
      {{k0800 + 197, 1000}, {k0800 + 3600 + 1234, 2000}, {k0800 + 2 * 3600 + 41 * 60 + 9, 1500}}, {"t", "kB"});
  std::vector<std::string> labels = TimeLabels(svg);
  ASSERT_FALSE(labels.empty());
  labels.pop_back();  // the axis caption
  EXPECT_EQ(labels,
            (std::vector<std::string>{"12-02 08:30", "12-02 09:00", "12-02 09:30", "12-02 10:00", "12-02 10:30"}));
}

}  // namespace
}  // namespace memfleet::chart
