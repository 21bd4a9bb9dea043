// Sparkline scaling and the SVG trend chart: well-formed XML (checked by a small parser below, since the
// test must not depend on an XML library), an <svg> root and one polyline vertex per sample.
#include "chart/chart.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "cli/commands/trend_command.h"

namespace memfleet::cli {
namespace {

using chart::ChartPoint;
using chart::RenderSvgLineChart;
using chart::Sparkline;
using chart::XmlEscape;

// ---- A strict little XML 1.0 well-formedness checker (elements, attributes, text, entities). ----
struct Element {
  std::string name;
  std::map<std::string, std::string> attrs;  // values with entities decoded
  std::string text;                          // direct text content, decoded
};

class XmlChecker {
 public:
  explicit XmlChecker(std::string_view doc) : s_(doc) {}

  // True when the document is well-formed; `error` says where it is not.
  bool Check() {
    SkipMisc(/*allow_decl=*/true);
    if (!Peek('<')) return Fail("no root element");
    if (!ParseElement()) return false;
    SkipMisc(false);
    if (pos_ != s_.size()) return Fail("content after the root element");
    return true;
  }

  std::string error;
  std::vector<Element> elements;  // document order

 private:
  bool Fail(const std::string& why) {
    if (error.empty()) error = why + " at byte " + std::to_string(pos_);
    return false;
  }
  bool Peek(char c) const { return pos_ < s_.size() && s_[pos_] == c; }
  bool StartsWith(std::string_view p) const { return s_.substr(pos_, p.size()) == p; }
  void SkipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t' || s_[pos_] == '\r')) ++pos_;
  }
  static bool NameChar(char c, bool first) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
           (!first && ((c >= '0' && c <= '9') || c == '-' || c == '.'));
  }
  bool Name(std::string& out) {
    size_t start = pos_;
    while (pos_ < s_.size() && NameChar(s_[pos_], pos_ == start)) ++pos_;
    out = std::string(s_.substr(start, pos_ - start));
    return !out.empty() || Fail("expected a name");
  }
  void SkipMisc(bool allow_decl) {
    for (;;) {
      SkipSpace();
      if (allow_decl && StartsWith("<?xml")) {
        size_t end = s_.find("?>", pos_);
        pos_ = end == std::string_view::npos ? s_.size() : end + 2;
        allow_decl = false;
      } else if (StartsWith("<!--")) {
        size_t end = s_.find("-->", pos_ + 4);
        pos_ = end == std::string_view::npos ? s_.size() : end + 3;
      } else {
        return;
      }
    }
  }
  // Character data up to '<' (or the closing quote); '&' must start a known entity.
  bool CharData(char stop, std::string& out) {
    while (pos_ < s_.size() && s_[pos_] != stop) {
      char c = s_[pos_];
      if (c == '<') return Fail("'<' in an attribute value");  // text stops at '<' before this
      if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r') return Fail("control character");
      if (c == '&') {
        size_t semi = s_.find(';', pos_);
        if (semi == std::string_view::npos) return Fail("unterminated entity");
        std::string_view ent = s_.substr(pos_ + 1, semi - pos_ - 1);
        static const std::map<std::string, char> kNamed = {
            {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
        auto it = kNamed.find(std::string(ent));
        if (it != kNamed.end()) {
          out += it->second;
        } else if (ent.size() > 1 && ent[0] == '#') {
          out += '?';  // numeric reference: accepted, not decoded
        } else {
          return Fail("unknown entity &" + std::string(ent) + ";");
        }
        pos_ = semi + 1;
        continue;
      }
      out += c;
      ++pos_;
    }
    return true;
  }
  bool ParseElement() {
    ++pos_;  // '<'
    Element e;
    if (!Name(e.name)) return false;
    for (;;) {
      size_t before = pos_;
      SkipSpace();
      if (StartsWith("/>")) {
        pos_ += 2;
        elements.push_back(std::move(e));
        return true;
      }
      if (Peek('>')) {
        ++pos_;
        break;
      }
      if (pos_ == before) return Fail("expected whitespace before an attribute");
      std::string attr;
      if (!Name(attr)) return false;
      SkipSpace();
      if (!Peek('=')) return Fail("attribute " + attr + " has no value");
      ++pos_;
      SkipSpace();
      if (!Peek('"') && !Peek('\'')) return Fail("attribute value not quoted");
      char q = s_[pos_++];
      std::string value;
      if (!CharData(q, value)) return false;
      if (!Peek(q)) return Fail("unterminated attribute value");
      ++pos_;
      if (!e.attrs.emplace(attr, value).second) return Fail("duplicate attribute " + attr);
    }
    size_t index = elements.size();
    elements.push_back(e);
    for (;;) {
      std::string text;
      if (!CharData('<', text)) return false;
      elements[index].text += text;
      if (pos_ >= s_.size()) return Fail("unclosed <" + e.name + ">");
      if (StartsWith("</")) {
        pos_ += 2;
        std::string closing;
        if (!Name(closing)) return false;
        if (closing != e.name) return Fail("</" + closing + "> closes <" + e.name + ">");
        SkipSpace();
        if (!Peek('>')) return Fail("expected >");
        ++pos_;
        return true;
      }
      if (StartsWith("<!--")) {
        SkipMisc(false);
        continue;
      }
      if (!ParseElement()) return false;
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
};

TEST(XmlCheckerTest, CatchesWhatItShould) {  // the checker itself must reject broken documents
  EXPECT_TRUE(XmlChecker("<a x=\"1\"><b/>t &amp; u</a>").Check());
  EXPECT_FALSE(XmlChecker("<a><b></a>").Check());
  EXPECT_FALSE(XmlChecker("<a x=1/>").Check());
  EXPECT_FALSE(XmlChecker("<a>x & y</a>").Check());
  EXPECT_FALSE(XmlChecker("<a>1 < 2</a>").Check());
  EXPECT_FALSE(XmlChecker("<a/><b/>").Check());
  EXPECT_FALSE(XmlChecker("<a x=\"<\"/>").Check());
}

std::vector<std::pair<double, double>> PolylinePoints(const Element& e) {
  std::vector<std::pair<double, double>> out;
  auto it = e.attrs.find("points");
  if (it == e.attrs.end()) return out;
  for (absl::string_view pair : absl::StrSplit(it->second, ' ', absl::SkipEmpty())) {
    std::vector<std::string> xy = absl::StrSplit(pair, ',');
    if (xy.size() != 2) return {};
    out.push_back({std::strtod(xy[0].c_str(), nullptr), std::strtod(xy[1].c_str(), nullptr)});
  }
  return out;
}

struct Parsed {
  bool ok = false;
  std::string error;
  std::vector<Element> elements;
  const Element* Find(const std::string& name, size_t nth = 0) const {
    for (const Element& e : elements) {
      if (e.name == name && nth-- == 0) return &e;
    }
    return nullptr;
  }
  size_t Count(const std::string& name) const {
    size_t n = 0;
    for (const Element& e : elements) n += e.name == name;
    return n;
  }
};

Parsed Parse(const std::string& svg) {
  XmlChecker checker(svg);
  Parsed p;
  p.ok = checker.Check();
  p.error = checker.error;
  p.elements = checker.elements;
  return p;
}

// ---- Sparkline ----

TEST(SparklineTest, ScalesMinToLowestAndMaxToHighestBlock) {
  // 8 levels over 0..70: (v - 0) / 70 * 7 is exactly the level.
  EXPECT_EQ(Sparkline({0, 10, 20, 30, 40, 50, 60, 70}), "▁▂▃▄▅▆▇█");
  EXPECT_EQ(Sparkline({70, 0}), "█▁");
  // 10, 20, 80: levels 0, (10/70)*7 = 1, 7.
  EXPECT_EQ(Sparkline({10, 20, 80}), "▁▂█");
  // Rounds to the nearest level: 100..200..300 -> 0, 3.5 -> 4, 7.
  EXPECT_EQ(Sparkline({100, 200, 300}), "▁▅█");
}

TEST(SparklineTest, AllEqualAndSinglePointAreAFlatMidLine) {
  EXPECT_EQ(Sparkline({5000, 5000, 5000}), "▄▄▄");
  EXPECT_EQ(Sparkline({42}), "▄");
  EXPECT_EQ(Sparkline({}), "");
}

TEST(SparklineTest, UnknownValuesAreGapsThatKeepAlignment) {
  EXPECT_EQ(Sparkline({0, std::nullopt, 70}), "▁ █");
  EXPECT_EQ(Sparkline({std::nullopt, std::nullopt}), "  ");
}

TEST(SparklineTest, ExtremeRangeDoesNotOverflow) {
  EXPECT_EQ(Sparkline({INT64_MIN, 0, INT64_MAX}), "▁▅█");  // the midpoint is level 3.5 -> 4
}

// ---- SVG ----

TEST(SvgChartTest, WellFormedWithOnePolylineVertexPerSample) {
  std::vector<ChartPoint> points = {
      {1796220000, 100000}, {1796223600, 150000}, {1796227200, 120000}, {1796230800, 200000}};
  std::string svg = RenderSvgLineChart(points, {"surfaceflinger total_kb on pixel-7", "total_kb"});
  Parsed doc = Parse(svg);
  ASSERT_TRUE(doc.ok) << doc.error << "\n" << svg;
  ASSERT_FALSE(doc.elements.empty());
  EXPECT_EQ(doc.elements[0].name, "svg");
  EXPECT_EQ(doc.elements[0].attrs.at("xmlns"), "http://www.w3.org/2000/svg");
  ASSERT_EQ(doc.Count("polyline"), 1u);
  std::vector<std::pair<double, double>> xy = PolylinePoints(*doc.Find("polyline"));
  ASSERT_EQ(xy.size(), points.size());
  for (size_t i = 1; i < xy.size(); ++i) EXPECT_GT(xy[i].first, xy[i - 1].first) << "time runs left to right";
  // SVG y grows downwards: the largest value (200000, last) is highest, the smallest (first) lowest.
  EXPECT_LT(xy[3].second, xy[1].second);
  EXPECT_LT(xy[1].second, xy[2].second);
  EXPECT_LT(xy[2].second, xy[0].second);
  EXPECT_EQ(doc.Count("circle"), points.size());
  // The title, and value labels at nice steps around 100000 kB (97.7 MB) to 200000 kB (195.3 MB).
  EXPECT_NE(svg.find("surfaceflinger total_kb on pixel-7"), std::string::npos);
  EXPECT_NE(svg.find(">75 MiB<"), std::string::npos);
  EXPECT_NE(svg.find(">200 MiB<"), std::string::npos);
  // Time labels (UTC): the first sample, 1796220000, is 8100 s (2h15m) before 2026-12-02T16:15:00Z.
  EXPECT_NE(svg.find("12-02 14:00"), std::string::npos);
}

// Rendered in a browser, the chart of a process between 29.05 and 29.15 MB labelled two ticks
// "29.1 MiB", and its last time label ran past the right edge.
TEST(SvgChartTest, DistinctValueLabelsAndTimeLabelsInsideTheImage) {
  std::string svg =
      RenderSvgLineChart({{1796220000, 29747}, {1796223600, 29800}, {1796227200, 29850}}, {"narrow", "kB"});
  Parsed doc = Parse(svg);
  ASSERT_TRUE(doc.ok) << doc.error;
  std::vector<std::string> value_labels, anchors;
  for (const Element& e : doc.elements) {
    if (e.name != "text" || e.attrs.count("text-anchor") == 0) continue;
    if (e.text.find(" MiB") != std::string::npos) value_labels.push_back(e.text);
    if (e.text.find(':') != std::string::npos) anchors.push_back(e.attrs.at("text-anchor"));
  }
  EXPECT_EQ(value_labels, (std::vector<std::string>{"29.00 MiB", "29.05 MiB", "29.10 MiB", "29.15 MiB", "29.20 MiB"}));
  ASSERT_EQ(anchors.size(), 5u);  // five time labels
  EXPECT_EQ(anchors.front(), "start");
  EXPECT_EQ(anchors.back(), "end");
}

TEST(SvgChartTest, TimeLabelsAreTellApartOnShortSpans) {
  // Three samples within a minute (16:15:00 to 16:15:40): the axis spans ten minutes about them, ticked
  // on whole minutes that read apart (chart/time_axis.h).
  std::string svg = RenderSvgLineChart({{1796228100, 1}, {1796228120, 2}, {1796228140, 3}}, {"short", "kB"});
  ASSERT_TRUE(Parse(svg).ok);
  EXPECT_NE(svg.find(">16:12<"), std::string::npos);
  EXPECT_NE(svg.find(">16:20<"), std::string::npos);
  // Over two years (2024-12-02 to 2026-12-02): dates, every 180 days counted from 1970-01-01.
  svg = RenderSvgLineChart({{1733140500, 1}, {1796228100, 2}}, {"long", "kB"});
  EXPECT_NE(svg.find(">2025-03-13<"), std::string::npos);
  EXPECT_NE(svg.find(">2026-09-04<"), std::string::npos);
}

TEST(SvgChartTest, SinglePointAndFlatSeriesStillDraw) {
  for (const std::vector<ChartPoint>& points :
       {std::vector<ChartPoint>{{1796228100, 5000}},
        std::vector<ChartPoint>{{1796228100, 5000}, {1796231700, 5000}, {1796235300, 5000}}}) {
    std::string svg = RenderSvgLineChart(points, {"flat", "kB"});
    Parsed doc = Parse(svg);
    ASSERT_TRUE(doc.ok) << doc.error;
    std::vector<std::pair<double, double>> xy = PolylinePoints(*doc.Find("polyline"));
    ASSERT_EQ(xy.size(), points.size());
    for (const auto& [x, y] : xy) {
      EXPECT_GT(x, 0);
      EXPECT_LT(x, 800);
      EXPECT_GT(y, 0);
      EXPECT_LT(y, 360);
    }
    EXPECT_EQ(svg.find("nan"), std::string::npos);
    EXPECT_EQ(svg.find("inf"), std::string::npos);
  }
}

TEST(SvgChartTest, ExtremeValuesStayDefined) {  // under UBSan: no out-of-range float -> int conversion
  for (int64_t v : {INT64_MAX, INT64_MIN}) {
    Parsed doc = Parse(RenderSvgLineChart({{0, v}}, {"extreme", "kB"}));
    ASSERT_TRUE(doc.ok) << doc.error;
    EXPECT_EQ(PolylinePoints(*doc.Find("polyline")).size(), 1u);
  }
  Parsed doc = Parse(RenderSvgLineChart({{INT64_MIN, INT64_MIN}, {INT64_MAX, INT64_MAX}}, {"wide", "kB"}));
  ASSERT_TRUE(doc.ok) << doc.error;
}

TEST(SvgChartTest, TextIsEscaped) {
  std::string svg = RenderSvgLineChart({{0, 1}, {60, 2}}, {"<b>&\"quote\" 'app'\x01", "kB"});
  Parsed doc = Parse(svg);
  ASSERT_TRUE(doc.ok) << doc.error;
  const Element* title = doc.Find("title");
  ASSERT_NE(title, nullptr);
  EXPECT_EQ(title->text, "<b>&\"quote\" 'app' ");  // decoded back; the control byte became a space
}

TEST(SvgChartTest, NoPointsIsStillADocument) {
  Parsed doc = Parse(RenderSvgLineChart({}, {"empty", "kB"}));
  ASSERT_TRUE(doc.ok) << doc.error;
  EXPECT_TRUE(PolylinePoints(*doc.Find("polyline")).empty());
}

// The App Summary chart: each series a polygon laid on the ones below it, so the top edge of the last is
// the stack's total at each time.
TEST(StackedChartTest, LayersStackAndTheTopIsTheTotal) {
  const std::vector<chart::StackedPoint> points = {{1796220000, {100, 200, 50}}, {1796223600, {150, 250, 0}}};
  const std::string svg = chart::RenderSvgStackedChart(points, {"Java Heap", "Native Heap", "Code"}, {"app", "kB"});
  Parsed doc = Parse(svg);
  ASSERT_TRUE(doc.ok) << doc.error << "\n" << svg;
  ASSERT_EQ(doc.Count("polygon"), 3u);
  EXPECT_EQ(doc.Find("polygon", 0)->attrs.at("data-series"), "Java Heap");
  EXPECT_EQ(doc.Find("polygon", 2)->attrs.at("data-series"), "Code");
  // Each polygon: the layer's top edge left to right, then the layer below's top edge right to left.
  const auto bottom = PolylinePoints(*doc.Find("polygon", 0));
  const auto middle = PolylinePoints(*doc.Find("polygon", 1));
  const auto top = PolylinePoints(*doc.Find("polygon", 2));
  ASSERT_EQ(bottom.size(), 4u);
  ASSERT_EQ(middle.size(), 4u);
  ASSERT_EQ(top.size(), 4u);
  EXPECT_EQ(middle[3], bottom[0]) << "Native Heap starts on Java Heap's top";
  EXPECT_EQ(middle[2], bottom[1]);
  // Java Heap 100 then 150; stacked with Native Heap 300 then 400; with Code 350 then 400 (Code 0 at t2).
  EXPECT_GT(bottom[0].second, bottom[1].second) << "150 is drawn above 100";
  EXPECT_EQ(top[1], middle[1]) << "Code is 0 at the second time: no height";
  EXPECT_LT(top[0].second, middle[0].second);
  // The dots: one per time on the total, titled with every series' value.
  ASSERT_EQ(doc.Count("circle"), 2u);
  EXPECT_NE(svg.find("Java Heap 100 kB; Native Heap 200 kB; Code 50 kB"), std::string::npos) << svg;
  // Totals 350 then 400: the second dot is higher (smaller y), and both sit on the top layer's edge.
  EXPECT_LT(std::strtod(doc.Find("circle", 1)->attrs.at("cy").c_str(), nullptr),
            std::strtod(doc.Find("circle", 0)->attrs.at("cy").c_str(), nullptr));
  EXPECT_DOUBLE_EQ(std::strtod(doc.Find("circle", 0)->attrs.at("cy").c_str(), nullptr), top[0].second);
}

TEST(StackedChartTest, NegativePartsStackAsZeroAndTextIsEscaped) {
  const std::string svg = chart::RenderSvgStackedChart({{1796220000, {100, -40}}}, {"<Java>", "System"}, {"a&b", "kB"});
  Parsed doc = Parse(svg);
  ASSERT_TRUE(doc.ok) << doc.error << "\n" << svg;
  const auto system = PolylinePoints(*doc.Find("polygon", 1));
  const auto java = PolylinePoints(*doc.Find("polygon", 0));
  EXPECT_EQ(system[0], java[0]) << "a negative part adds no height";
  EXPECT_EQ(doc.Find("polygon", 0)->attrs.at("data-series"), "<Java>");
  EXPECT_NE(svg.find("System -40 kB"), std::string::npos) << "its value is still told";
  EXPECT_TRUE(Parse(chart::RenderSvgStackedChart({}, {"a"}, {"empty", "kB"})).ok);
}

TEST(TrendSvgTest, OnePointPerKnownSample) {
  v1::ProcessHistoryResponse history;
  const char* times[] = {"2026-12-01T10:00:00Z", "2026-12-01T11:00:00Z", "2026-12-01T12:00:00Z"};
  for (int i = 0; i < 3; ++i) {
    v1::HistoryPoint* p = history.add_points();
    p->set_captured_at(times[i]);
    p->set_pid(100);
    p->set_value_kb(1000 * (i + 1));
    p->set_value_known(i != 1);  // the middle report had the figure null
  }
  TrendArgs args;
  args.device_id = "dev & co";
  args.process_name = "com.example";
  std::string svg = RenderTrendSvg(args, history);
  Parsed doc = Parse(svg);
  ASSERT_TRUE(doc.ok) << doc.error;
  EXPECT_EQ(PolylinePoints(*doc.Find("polyline")).size(), 2u);
  EXPECT_EQ(doc.Find("title")->text, "com.example total_kb on dev & co");
}

}  // namespace
}  // namespace memfleet::cli
