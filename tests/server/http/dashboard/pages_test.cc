// The dashboard's pages on the sample captures' expected reports (tests/data/captures/*/expected.json,
// the figures the accounting rules give): each page shows those figures as written with thousands
// separators, a null figure reads "-" as in the CLI's tables (muted, never 0), text from a phone is
// escaped wherever it appears, and sorting follows ?sort=.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nlohmann/json.hpp"
#include "report/report_json.h"
#include "chart/figure_text.h"
#include "server/http/dashboard/baselines_page.h"
#include "server/http/dashboard/device_page.h"
#include "server/http/dashboard/fleet_page.h"
#include "server/http/dashboard/html.h"
#include "server/http/dashboard/message_page.h"
#include "server/http/dashboard/process_page.h"
#include "server/http/dashboard/target.h"
#include "tests/support/test_data.h"

namespace memfleet::dashboard {
namespace {

using nlohmann::json;

const std::vector<std::string> kCaptures = {"generic-noddr", "legacy-419",  "mali-rockchip", "mtk-mt6989",
                                            "qcom-edge",     "qcom-sm8450", "xring-o1"};
const std::string kHostile = "<script>alert('x')</script>&\"";

json Expected(const std::string& capture) {
  return json::parse(testing::ReadTestData("captures/" + capture + "/expected.json"));
}

// A report's tier as its expected.json says it: one written before tiers (no field) is of the kernel tier.
// The shell phone's (captures-shell/shield-shell) is of the dumpsys tier.
std::string TierOf(const json& expected) { return expected["device"].value("tier", "kernel"); }
json ShellExpected() { return json::parse(testing::ReadTestData("captures-shell/shield-shell/expected.json")); }

report::Report ReportOf(const std::string& capture) {
  absl::StatusOr<report::Report> r =
      report::ReportFromJson(testing::ReadTestData("captures/" + capture + "/expected.json"));
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : report::Report();
}

// How a reader expects 3567646 kB written: "3,567,646" (test's own grouping, not the page's).
std::string Grouped(int64_t kb) {
  std::string digits = std::to_string(kb < 0 ? -kb : kb);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<size_t>(i), ",");
  return kb < 0 ? "-" + digits : digits;
}

// The text of the table cell a figure is in, as the page writes it.
std::string Cell(const json& kb) {
  return kb.is_null() ? "<td class=\"num unset\">-</td>" : ">" + Grouped(kb.get<int64_t>()) + "</td>";
}

FleetDevice DeviceOf(const std::string& capture) {
  FleetDevice d;
  d.device_id = capture;
  d.model = "model of " + capture;
  d.platform = Expected(capture)["platform"].get<std::string>();
  d.build = "build/" + capture;
  d.online = capture != "legacy-419";
  d.last_capture_at = "2026-11-30T08:00:00.000Z";
  const json expected = Expected(capture);
  const json& total = expected["device"]["total_kb"];
  if (!total.is_null()) d.total_kb = total.get<int64_t>();
  d.tier = expected["device"].value("tier", "kernel");  // a report written before tiers is of the kernel tier
  return d;
}

DevicePageInput Input(FleetDevice device, report::Report report, std::string capture_id, std::string captured_at) {
  DevicePageInput in;
  in.device = std::move(device);
  in.report = std::move(report);
  in.capture_id = std::move(capture_id);
  in.captured_at = std::move(captured_at);
  return in;
}

// A capture of the device page's list that answered no sweep and carries no label.
EarlierCapture Periodic(std::string captured_at, report::Kb total_kb) {
  EarlierCapture c;
  c.captured_at = std::move(captured_at);
  c.total_kb = total_kb;
  return c;
}

std::vector<FleetDevice> Fleet() {
  std::vector<FleetDevice> rows;
  for (const std::string& c : kCaptures) rows.push_back(DeviceOf(c));
  return rows;
}

TEST(FleetPageTest, EveryDeviceShowsItsStoredTotalAndLinksToItsPage) {
  const std::string html = RenderFleetPage(Fleet(), {}, {});
  for (const std::string& c : kCaptures) {
    SCOPED_TRACE(c);
    EXPECT_NE(html.find("<a href=\"/device/" + c + "\">" + c + "</a>"), std::string::npos);
    EXPECT_NE(html.find(Cell(Expected(c)["device"]["total_kb"])), std::string::npos);
  }
  EXPECT_NE(html.find("Fleet: 7 devices"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"offline\">offline</td>"), std::string::npos);
  FleetDevice unnamed = DeviceOf("qcom-sm8450");
  unnamed.model.clear();
  EXPECT_NE(RenderFleetPage({unnamed}, {}, {}).find("<td><span class=\"unset\">-</span></td>"), std::string::npos)
      << "a model the agent did not send reads as the CLI writes it";
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

// Red is for problems (a figure the capture could not see); a build or model the device does not say is
// muted text.
TEST(FleetPageTest, AnUnsetBuildIsMutedNotRed) {
  FleetDevice unset = DeviceOf("qcom-sm8450");
  unset.build.clear();
  const std::string html = RenderFleetPage({unset}, {}, {});
  EXPECT_NE(html.find("<td><span class=\"unset\">-</span></td>"), std::string::npos) << html;
  EXPECT_EQ(html.find("<span class=\"unknown\">"), std::string::npos) << html;
  const size_t rule = html.find(".unset {");
  ASSERT_NE(rule, std::string::npos);
  const std::string style = html.substr(rule, html.find('}', rule) - rule);
  EXPECT_EQ(style.find("#b71c1c"), std::string::npos) << style;
  EXPECT_EQ(style.find("italic"), std::string::npos) << style;
}

// The CLI writes a value nobody knows as "-" (chart::kNoValue); so does every page, muted as an unset
// build is: a null figure is not a problem, so nothing styles it red.
TEST(FleetPageTest, NoValueIsTheClisDashMutedNotRed) {
  ASSERT_STREQ(chart::kNoValue, "-") << "the CLI's spelling changed: this test's golden text too";
  FleetDevice d = DeviceOf("legacy-419");
  ASSERT_FALSE(d.total_kb.has_value()) << "the sample this test relies on changed";
  const std::string html = RenderFleetPage({d}, {}, {});
  EXPECT_NE(html.find("<td class=\"num unset\">-</td>"), std::string::npos) << html;
  EXPECT_EQ(html.find("unknown"), std::string::npos) << html;
  EXPECT_EQ(html.find("#b71c1c"), std::string::npos) << "no red in the style sheet but for problems";
  EXPECT_NE(html.find(".warn {"), std::string::npos);
  EXPECT_EQ(NoValue(), "<span class=\"unset\">-</span>");
}

// Each device's tier in its own column, after the build; one not known yet (nothing stored since the server
// kept tiers) is the CLI's muted "-", never a guessed "kernel".
TEST(FleetPageTest, EachDeviceShowsTheTierOfItsLatestCapture) {
  FleetDevice shell = DeviceOf("qcom-sm8450");
  shell.device_id = "shell-phone";
  shell.tier = "dumpsys";
  FleetDevice unknown = DeviceOf("qcom-sm8450");
  unknown.device_id = "old-phone";
  unknown.tier.clear();
  const std::string html = RenderFleetPage({DeviceOf("qcom-sm8450"), shell, unknown}, {}, {});
  EXPECT_NE(html.find(">Build</a></th><th><a href=\"/?sort=tier\">Tier</a></th>"), std::string::npos) << html;
  EXPECT_NE(html.find("<td>build/qcom-sm8450</td><td>kernel</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("<td>build/qcom-sm8450</td><td>dumpsys</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("<td>build/qcom-sm8450</td><td><span class=\"unset\">-</span></td>"), std::string::npos) << html;
}

// A device that has stored no capture yet: its last capture is "never", as `memfleet devices` writes it,
// and its total the CLI's "-".
TEST(FleetPageTest, ADeviceWithoutACaptureSaysNeverAsTheCliDoes) {
  FleetDevice d = DeviceOf("qcom-sm8450");
  d.last_capture_at.clear();
  d.total_kb.reset();
  const std::string html = RenderFleetPage({d}, {}, {});
  EXPECT_NE(html.find("<td>never</td><td class=\"num unset\">-</td>"), std::string::npos) << html;
  EXPECT_EQ(html.find("none yet"), std::string::npos) << html;
}

TEST(FleetPageTest, SortsByAColumnEitherWayWithUnknownTotalsLast) {
  std::vector<FleetDevice> rows = Fleet();
  ASSERT_TRUE(SortFleet(rows, "-total").ok());
  for (size_t i = 1; i < rows.size(); ++i) {
    if (!rows[i].total_kb) {
      for (size_t j = i; j < rows.size(); ++j) EXPECT_FALSE(rows[j].total_kb.has_value()) << rows[j].device_id;
      break;
    }
    EXPECT_GE(*rows[i - 1].total_kb, *rows[i].total_kb);
  }
  ASSERT_TRUE(SortFleet(rows, "total").ok());
  EXPECT_FALSE(rows.back().total_kb.has_value()) << "an unknown total sorts last both ways";
  ASSERT_TRUE(SortFleet(rows, "-device_id").ok());
  EXPECT_EQ(rows.front().device_id, "xring-o1");
  EXPECT_EQ(rows.back().device_id, "generic-noddr");
  absl::Status bad = SortFleet(rows, "pss<b>");
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("device_id, state, model"), std::string::npos);
}

TEST(FleetPageTest, HeadersLinkTheOtherDirectionAndKeepTheFilter) {
  const std::string html = RenderFleetPage(Fleet(), {}, {"total", {"model=Pixel 8"}});
  EXPECT_NE(html.find("href=\"/?sort=-total&amp;where=model%3DPixel%208\""), std::string::npos);
  EXPECT_NE(html.find("href=\"/?sort=device_id&amp;where=model%3DPixel%208\""), std::string::npos);
  EXPECT_NE(html.find("Devices where <b>model=Pixel 8</b>"), std::string::npos);
}

TEST(FleetPageTest, GroupsShowTheirFigures) {
  const std::string html = RenderFleetPage(Fleet(), {{"Pixel 8", 3, 1000, 2000, 3500000, 4000000}}, {});
  EXPECT_NE(html.find("<td>Pixel 8</td><td class=\"num\">3</td><td class=\"num\">1,000</td><td class=\"num\">2,000"
                      "</td><td class=\"num\">3,500,000</td><td class=\"num\">4,000,000</td>"),
            std::string::npos);
}

TEST(FleetPageTest, GroupsCountTheirUnknownTotals) {
  FleetGroup some{"Pixel 8", 2, 1000, 2000, 3500000, 4000000};
  some.unknown = 1;
  FleetGroup none{"SM8450", 0};
  none.unknown = 1;
  const std::string html = RenderFleetPage(Fleet(), {some, none}, {});
  EXPECT_NE(html.find("<td>Pixel 8</td><td class=\"num\">2 (+1 unknown)</td><td class=\"num\">1,000</td>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<td>SM8450</td><td class=\"num\">0 (+1 unknown)</td><td class=\"num unset\">-</td>"),
            std::string::npos)
      << html;
}

// As `memfleet fleet` says it (report/tier_mix.h): a model of both tiers, and one of a tier with devices
// of unknown tier beside it; a model of one tier says nothing.
TEST(FleetPageTest, AModelMixingTiersSaysSoUnderTheGroups) {
  FleetGroup mixed{"SHIELD <TV>", 3, 966011, 966011, 3567646, 3567646};
  mixed.tiers.Add(TierOf(ShellExpected()), 2);
  mixed.tiers.Add(TierOf(Expected("qcom-sm8450")), 1);
  FleetGroup partly{"SM8450 HDK", 3, 1, 1, 1, 1};
  partly.tiers.Add(TierOf(Expected("qcom-sm8450")), 1);
  partly.tiers.Add("", 2);  // stored before tiers
  FleetGroup rooted{"Pixel 8", 2, 1, 1, 1, 1};
  rooted.tiers.Add("kernel", 2);
  const std::string html = RenderFleetPage(Fleet(), {mixed, partly, rooted}, {});
  EXPECT_NE(html.find("<p class=\"warn tiers\">SHIELD &lt;TV&gt; mixes tiers (kernel 1, dumpsys 2): its figures do "
                      "not compare; split it with where tier=kernel or tier=dumpsys</p>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<p class=\"warn tiers\">SM8450 HDK has 2 devices of unknown tier (stored before tiers): "
                      "their figures may not compare</p>"),
            std::string::npos)
      << html;
  EXPECT_EQ(html.find("Pixel 8 mixes"), std::string::npos);
  EXPECT_EQ(html.find("Pixel 8 has"), std::string::npos);
}

TEST(FleetPageTest, HostileDeviceTextIsEscapedEverywhere) {
  FleetDevice d = DeviceOf("qcom-sm8450");
  d.device_id = d.model = d.platform = d.build = kHostile;
  const std::string html = RenderFleetPage({d}, {{kHostile, 1, 1, 1, 1, 1}}, {"device_id", {kHostile}});
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("alert('x')"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(&apos;x&apos;)&lt;/script&gt;&amp;&quot;"), std::string::npos);
  EXPECT_NE(html.find("/device/%3Cscript%3Ealert%28%27x%27%29%3C%2Fscript%3E%26%22"), std::string::npos);
}

TEST(DevicePageTest, ShowsEveryDeviceAndProcessFigureOfTheReport) {
  for (const std::string& c : kCaptures) {
    SCOPED_TRACE(c);
    const json expected = Expected(c);
    const std::string html = RenderDevicePage(Input(DeviceOf(c), ReportOf(c), c + "-capture", "2026-11-30T08:00:00Z"));
    for (const char* part : {"ddr_kb", "static_reserved_kb", "kernel_kb", "processes_kb", "total_kb", "mem_total_kb"}) {
      EXPECT_NE(html.find(Cell(expected["device"][part])), std::string::npos) << part;
    }
    for (const auto& [pid, p] : expected["processes"].items()) {
      const std::string row_start = "<td class=\"num\">" + pid + "</td>";
      const size_t row = html.find(row_start);
      ASSERT_NE(row, std::string::npos) << pid;
      const std::string rest = html.substr(row, html.find("</tr>", row) - row);
      for (const char* field : {"total_kb", "non_graphics_kb", "gl_kb", "dma_kb", "native_graphics_kb", "gfxdev_kb"}) {
        EXPECT_NE(rest.find(Cell(p[field])), std::string::npos) << pid << " " << field << " in " << rest;
      }
    }
  }
}

TEST(FleetPageTest, SparklinesScaleTheWeekAndLeaveGapsForUnknownTotals) {
  // 24 px high, 2 px margins: the smallest value at y=22, the largest at y=2; 120 px wide, x from 2 to 118.
  EXPECT_EQ(SparklineSvg({100, 300, 200}),
            "<svg class=\"sparkline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"120\" height=\"24\">"
            "<polyline fill=\"none\" stroke=\"#1f77b4\" points=\"2.0,22.0 60.0,2.0 118.0,12.0\"/></svg>");
  const std::string gap = SparklineSvg({100, std::nullopt, 300});
  EXPECT_NE(gap.find("points=\"2.0,22.0\"/><polyline fill=\"none\" stroke=\"#1f77b4\" points=\"118.0,2.0\""),
            std::string::npos)
      << gap;
  EXPECT_NE(SparklineSvg({5, 5}).find("points=\"2.0,12.0 118.0,12.0\""), std::string::npos) << "flat: the middle";
  EXPECT_NE(SparklineSvg({INT64_MIN, INT64_MAX}).find("points=\"2.0,22.0 118.0,2.0\""), std::string::npos);
  EXPECT_EQ(SparklineSvg({std::nullopt}), "");
  EXPECT_EQ(SparklineSvg({}), "");
  FleetDevice d = DeviceOf("qcom-sm8450");
  d.recent_totals_kb = {1, 2};
  EXPECT_NE(RenderFleetPage({d}, {}, {}).find("<td class=\"spark\"><svg class=\"sparkline\""), std::string::npos);
}

TEST(DevicePageTest, TotalTrendAndCapturesByTime) {
  const json total = Expected("qcom-sm8450")["device"]["total_kb"];
  DevicePageInput in = Input(DeviceOf("qcom-sm8450"), ReportOf("qcom-sm8450"), "c2", "2026-11-30T09:00:00.000Z");
  in.trend_days = 7;
  in.total_trend = {{1796202000, 3500000}, {1796205600, total.get<int64_t>()}};
  in.captures = {Periodic("2026-11-30T08:00:00.000Z", 3500000), Periodic("2026-11-30T08:30:00.000Z", std::nullopt),
                 Periodic("2026-11-30T09:00:00.000Z", total.get<int64_t>())};
  const std::string html = RenderDevicePage(in);
  EXPECT_NE(html.find("<h2>Total over the last 7 days</h2>"), std::string::npos);
  EXPECT_NE(html.find("<title>total_kb on qcom-sm8450</title>"), std::string::npos);
  EXPECT_EQ(html.find("<?xml"), std::string::npos);
  const size_t newest =
      html.find("<tr class=\"this\"><td><a href=\"/device/qcom-sm8450?at=2026-11-30T09%3A00%3A00.000Z\">");
  const size_t unknown =
      html.find("?at=2026-11-30T08%3A30%3A00.000Z\">2026-11-30T08:30:00.000Z</a></td><td class=\"num unset\">-</td>");
  const size_t oldest =
      html.find("?at=2026-11-30T08%3A00%3A00.000Z\">2026-11-30T08:00:00.000Z</a></td><td class=\"num\">3,500,000");
  ASSERT_NE(newest, std::string::npos) << html;
  ASSERT_NE(unknown, std::string::npos);
  ASSERT_NE(oldest, std::string::npos);
  EXPECT_LT(newest, unknown) << "newest first";
  EXPECT_LT(unknown, oldest);
}

// As `memfleet report` heads a capture: "labels: run=1234" for its sweep's labels, "agent labels: ..."
// for its agent's; and the sweep it answered. A periodic capture without labels has no mark.
TEST(DevicePageTest, CapturesListMarksSweepAndLabelledCaptures) {
  DevicePageInput in = Input(DeviceOf("qcom-sm8450"), ReportOf("qcom-sm8450"), "c3", "2026-11-30T10:00:00.000Z");
  EarlierCapture periodic = Periodic("2026-11-30T08:00:00.000Z", 3500000);
  EarlierCapture swept = Periodic("2026-11-30T09:00:00.000Z", 3500001);
  swept.sweep_id = "sw-<7>";
  swept.labels = {{"run", "1234"}, {"build", "a&b"}};
  EarlierCapture agent_labelled = Periodic("2026-11-30T10:00:00.000Z", 3500002);
  agent_labelled.agent_labels = {{"rack", "7"}};
  in.captures = {periodic, swept, agent_labelled};
  const std::string html = RenderDevicePage(in);
  EXPECT_NE(html.find("<th>Marks</th>"), std::string::npos) << html;
  EXPECT_NE(html.find(">3,500,000</td><td class=\"marks\"></td></tr>"), std::string::npos) << "periodic: no mark";
  EXPECT_NE(html.find(">3,500,001</td><td class=\"marks\"><span class=\"sweep\">sweep sw-&lt;7&gt;</span> · "
                      "<span class=\"labels\">labels: build=a&amp;b run=1234</span></td></tr>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find(">3,500,002</td><td class=\"marks\"><span class=\"labels\">agent labels: rack=7</span></td>"),
            std::string::npos)
      << html;
}

// A phone rooted later: its shell captures (the dumpsys tier) then its rooted ones (the kernel tier). The
// first capture of the new tier is marked in the list, first of its marks, and under the chart; a capture
// stored before tiers (unknown) marks nothing.
TEST(DevicePageTest, ACaptureWhoseTierChangesIsMarkedInTheListAndUnderTheChart) {
  const json shell = ShellExpected();
  const json rooted = Expected("qcom-sm8450");
  ASSERT_EQ(TierOf(shell), "dumpsys");
  ASSERT_EQ(TierOf(rooted), "kernel");
  DevicePageInput in = Input(DeviceOf("qcom-sm8450"), ReportOf("qcom-sm8450"), "c4", "2026-11-30T11:00:00.000Z");
  in.total_trend = {{1796205600, shell["device"]["total_kb"].get<int64_t>()},
                    {1796216400, rooted["device"]["total_kb"].get<int64_t>()}};
  EarlierCapture before_tiers = Periodic("2026-11-30T07:00:00.000Z", shell["device"]["total_kb"].get<int64_t>());
  EarlierCapture shell_capture = Periodic("2026-11-30T08:00:00.000Z", shell["device"]["total_kb"].get<int64_t>());
  shell_capture.tier = TierOf(shell);
  EarlierCapture rooted_capture = Periodic("2026-11-30T10:00:00.000Z", rooted["device"]["total_kb"].get<int64_t>());
  rooted_capture.tier = TierOf(rooted);
  rooted_capture.sweep_id = "sw-1";
  EarlierCapture rooted_again = Periodic("2026-11-30T11:00:00.000Z", rooted["device"]["total_kb"].get<int64_t>());
  rooted_again.tier = TierOf(rooted);
  in.captures = {before_tiers, shell_capture, rooted_capture, rooted_again};
  const std::string html = RenderDevicePage(in);
  const std::string mark = "tier dumpsys -&gt; kernel: figures before and after do not compare";
  EXPECT_NE(html.find(">" + Grouped(rooted["device"]["total_kb"].get<int64_t>()) +
                      "</td><td class=\"marks\"><span class=\"tier-change warn\">" + mark +
                      "</span> · <span class=\"sweep\">sweep sw-1</span></td></tr>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<p class=\"warn tier-change\">at 2026-11-30T10:00:00.000Z: " + mark + "</p>"), std::string::npos)
      << html;
  size_t marks = 0;
  for (size_t at = html.find(mark); at != std::string::npos; at = html.find(mark, at + 1)) ++marks;
  EXPECT_EQ(marks, 2u) << "once in the list, once under the chart: " << html;
  EXPECT_EQ(html.find("tier -&gt;"), std::string::npos) << "the capture of unknown tier marks nothing";
}

TEST(DevicePageTest, NullFiguresReadAsInTheCliNotZero) {
  const json expected = Expected("legacy-419");
  ASSERT_TRUE(expected["device"]["total_kb"].is_null() && expected["device"]["kernel_kb"].is_null())
      << "the sample this test relies on changed";
  const std::string html = RenderDevicePage(Input(DeviceOf("legacy-419"), ReportOf("legacy-419"), "c", "t"));
  EXPECT_NE(html.find("<b>total</b></td><td class=\"num unset\">-</td>"), std::string::npos);
  EXPECT_NE(html.find(">kernel -</text>"), std::string::npos) << "no bar segment, named in the legend";
  EXPECT_EQ(html.find("unknown"), std::string::npos) << "one spelling of no value";
  EXPECT_EQ(html.find("fill=\"#ffa726\"><title>"), std::string::npos);
}

TEST(DevicePageTest, BarSegmentsAreInProportionToDdr) {
  const report::Report r = ReportOf("qcom-sm8450");
  const json d = Expected("qcom-sm8450")["device"];
  const std::string svg = BreakdownBarSvg(r.device);
  const double kernel_width = 800.0 * d["kernel_kb"].get<double>() / d["ddr_kb"].get<double>();
  char want[64];
  std::snprintf(want, sizeof want, "width=\"%.1f\" height=\"28\" fill=\"#ffa726\"", kernel_width);
  EXPECT_NE(svg.find(want), std::string::npos) << svg;
}

TEST(DevicePageTest, HostileProcessNamesAndWarningsAreEscaped) {
  report::Report r = ReportOf("qcom-sm8450");
  r.processes.begin()->second.name = kHostile;
  r.warnings.push_back(kHostile);
  FleetDevice d = DeviceOf("qcom-sm8450");
  d.device_id = kHostile;
  const std::string html = RenderDevicePage(Input(d, r, kHostile, kHostile));
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("<li class=\"warn\">&lt;script&gt;"), std::string::npos);
}

// A name as long as a rewritten command line: the link stays short and names the capture and the name's
// key; the name itself is the link's text, whole.
TEST(DevicePageTest, ProcessLinksAreShortWhateverTheNameIsLong) {
  report::Report r = ReportOf("qcom-sm8450");
  std::string name = "/system/bin/indexer";
  while (name.size() < 6000) name += " --path=/data/\xe2\x98\x83/" + std::to_string(name.size());
  r.processes.begin()->second.name = name;
  const std::string html =
      RenderDevicePage(Input(DeviceOf("qcom-sm8450"), r, "qcom-sm8450:17", "2026-11-30T08:00:00Z"));
  const std::string link = "<a href=\"/device/qcom-sm8450/capture/qcom-sm8450%3A17/process/" + ProcessKey(name) + "\">";
  const size_t at = html.find(link);
  ASSERT_NE(at, std::string::npos) << "the link by capture and name key";
  EXPECT_EQ(html.compare(at + link.size(), name.size(), name), 0) << "the whole name as its text";
  for (size_t href = html.find("href=\""); href != std::string::npos; href = html.find("href=\"", href + 1)) {
    EXPECT_LT(html.find('"', href + 6) - href, 300u) << html.substr(href, 120);
  }
}

TEST(ProcessPageTest, DrawsTheTrendChartInlineAndListsTheModel) {
  ProcessPageInput in;
  in.device_id = "qcom-sm8450";
  in.model = "SM8450 <HDK>";
  in.process_name = "com.tencent.mm";
  in.history = {{1796220000, 215000}, {1796223600, 215236}};
  in.same_model = {{"qcom-sm8450", "2026-11-30T08:00:00Z", 215236, "qcom-sm8450-1"},
                   {"other", "2026-11-30T08:00:00Z", std::nullopt, "other:7"}};
  const std::string html = RenderProcessPage(in);
  EXPECT_EQ(html.find("<?xml"), std::string::npos);
  EXPECT_NE(html.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_NE(html.find("com.tencent.mm total_kb on qcom-sm8450"), std::string::npos);
  EXPECT_NE(html.find("latest 215,236 kB"), std::string::npos);
  EXPECT_NE(html.find("On the fleet's devices of model SM8450 &lt;HDK&gt;"), std::string::npos);
  EXPECT_NE(html.find("href=\"/device/other/capture/other%3A7/process/" + ProcessKey("com.tencent.mm") + "\""),
            std::string::npos)
      << html;
  // Where the page knows a capture holding the name, every row's link names the process by it: another
  // device's latest capture may lack the process.
  in.name_capture_id = "qcom-sm8450-1";
  EXPECT_NE(RenderProcessPage(in).find("href=\"/device/other/capture/qcom-sm8450-1/process/" +
                                       ProcessKey("com.tencent.mm") + "\""),
            std::string::npos);
  EXPECT_EQ(RenderProcessPage(in).find("other%3A7"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num unset\">-</td>"), std::string::npos);
}

// The process's chart crosses the phone's rooting: the capture where the tier changes is said under it.
TEST(ProcessPageTest, AChangeOfTierIsSaidUnderTheChart) {
  ProcessPageInput in;
  in.device_id = "shield";
  in.model = "SHIELD Android TV";
  in.process_name = "surfaceflinger";
  in.history = {{1796220000, 161015}, {1796223600, 150000}};
  in.history_tiers = {{"2026-11-30T08:00:00.000Z", TierOf(ShellExpected())},
                      {"2026-11-30T09:00:00.000Z", TierOf(Expected("qcom-sm8450"))}};
  const std::string html = RenderProcessPage(in);
  EXPECT_NE(html.find("<p class=\"warn tier-change\">at 2026-11-30T09:00:00.000Z: tier dumpsys -&gt; kernel: "
                      "figures before and after do not compare</p>"),
            std::string::npos)
      << html;
  in.history_tiers[1].tier = in.history_tiers[0].tier;
  EXPECT_EQ(RenderProcessPage(in).find("tier-change"), std::string::npos) << "one tier: nothing to say";
}

// With heaps: the App Summary's seven parts as stacked layers, the latest heaps and App Summary tables,
// links to chart each field; without any: one line saying what to capture.
TEST(ProcessPageTest, AppSummaryStackedAndTheLatestHeaps) {
  ProcessPageInput in;
  in.device_id = "qcom-sm8450";
  in.process_name = "/system/bin/surfaceflinger";
  in.history = {{1796220000, 79341}};
  const std::string none = RenderProcessPage(in);
  EXPECT_NE(none.find("No capture of this process has its heaps: they need full smaps"), std::string::npos) << none;
  EXPECT_EQ(none.find("<polygon"), std::string::npos);

  in.summary_history = {{1796220000, {21414, 30805, 5078, 87, 16201, 548, 5208}},
                        {1796223600, {21414, 43503, 5078, 87, 16201, 548, 5208}}};
  in.summary_missing = 1;
  report::ProcessReport p;
  p.heaps = report::Heaps{{"native", {30805, 637, 0, 30805}}, {"dalvik", {21414, 4571, 0, 21414}}};
  p.app_summary = report::AppSummary{21414, 30805, 5078, 87, 16201, 548, 5208, 79341, 5208};
  p.gl_kb = 1000;
  p.dma_kb = std::nullopt;
  in.latest_breakdown = p;
  in.latest_breakdown_at = "2026-11-30T08:00:00.000Z";
  const std::string html = RenderProcessPage(in);
  for (const char* part : {"Java Heap", "Native Heap", "Code", "Stack", "Graphics", "Private Other", "System"}) {
    EXPECT_NE(html.find(std::string("data-series=\"") + part + "\""), std::string::npos) << part;
  }
  EXPECT_NE(html.find("2 captures with full smaps"), std::string::npos);
  EXPECT_NE(html.find("1 without (not drawn)"), std::string::npos);
  // dumpsys' heap order: Native Heap before Dalvik Heap.
  EXPECT_LT(html.find("<tr data-heap=\"native\"><td>Native Heap</td><td class=\"num\">30,805</td>"),
            html.find("<tr data-heap=\"dalvik\">"));
  EXPECT_NE(html.find("<td>DMA-BUF (dma_kb)</td><td class=\"num unset\">-</td>"), std::string::npos);
  EXPECT_NE(html.find("<tr data-field=\"total_pss_kb\"><td>TOTAL PSS</td><td class=\"num\">79,341</td>"),
            std::string::npos);
  EXPECT_NE(html.find("href=\"/device/qcom-sm8450/process/%2Fsystem%2Fbin%2Fsurfaceflinger?metric="
                      "app_summary.native_heap_kb\""),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<b>total_kb</b>"), std::string::npos) << "the figure shown is not a link";
}

TEST(BaselinesPageTest, BudgetsOverComeFirstWorstExcessFirstAndTextIsEscaped) {
  BaselinesPageInput in;
  in.name = "lab <b>";
  in.version = 3;
  in.scheme = 2;
  in.devices = 4;
  in.devices_not_applicable = 1;
  in.unbudgeted = 2;
  in.rows.push_back({"M1", "B1", "Display", "within", "graphics_dma_kb", 1000, 4, 0, 0, 900, -100, "d1"});
  in.rows.push_back({"M1", "B1", "Display", "slightly", "non_graphics_kb", 1000, 4, 1, 0, 1010, 10, "d2"});
  in.rows.push_back({"M1", "B1", "Framework", "", "target_total_kb", 5000, 3, 2, 1, 7500, 2500, "<d3>"});
  const std::string html = RenderBaselinesPage(in);
  EXPECT_NE(html.find("<h1>Baseline lab &lt;b&gt; (version 3, scheme 2)</h1>"), std::string::npos) << html;
  EXPECT_NE(html.find("latest report of 4 devices; 1 it does not apply to; 2 processes without a budget."),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<h2>Over budget: 2</h2>"), std::string::npos);
  EXPECT_NE(html.find("<h2>Within budget: 1</h2>"), std::string::npos);
  const size_t department = html.find("<td>Framework (department)</td>");
  const size_t slightly = html.find("<td>slightly</td>");
  const size_t within = html.find("<td>within</td>");
  ASSERT_NE(department, std::string::npos) << html;
  EXPECT_LT(department, slightly) << "the larger excess (2,500 kB) first";
  EXPECT_LT(slightly, html.find("<h2>Within budget"));
  EXPECT_GT(within, html.find("<h2>Within budget"));
  EXPECT_NE(html.find("<td class=\"num\">2 of 3 (+1 unknown)</td>"), std::string::npos)
      << "as the CLI and the fleet groups";
  EXPECT_NE(html.find("<td class=\"num\">1 of 4</td>"), std::string::npos) << "no unknown: no note";
  EXPECT_NE(html.find("7,500 on <a href=\"/device/%3Cd3%3E\">&lt;d3&gt;</a>"), std::string::npos) << html;
  EXPECT_NE(html.find("<td class=\"num\">-100</td>"), std::string::npos) << "headroom shows as a negative excess";
  EXPECT_EQ(html.find("<d3>"), std::string::npos);
}

TEST(BaselinesPageTest, WithoutACheckItSaysWhy) {
  BaselinesPageInput in;
  in.absent = "no baseline is stored (run `memfleet baseline import FILE` first)";
  const std::string html = RenderBaselinesPage(in);
  EXPECT_NE(html.find("no baseline is stored (run `memfleet baseline import FILE` first)"), std::string::npos);
  EXPECT_EQ(html.find("Over budget"), std::string::npos);
}

TEST(MessagePageTest, LoginFormPostsATokenAndMessagesAreEscaped) {
  const std::string login = RenderLoginPage("token <refused>");
  EXPECT_NE(login.find("<form method=\"post\" action=\"/login\">"), std::string::npos);
  EXPECT_NE(login.find("name=\"token\""), std::string::npos);
  EXPECT_NE(login.find("token &lt;refused&gt;"), std::string::npos);
  const std::string page = RenderMessagePage(400, "cannot sort by \"<x>\"");
  EXPECT_NE(page.find("<h1>400</h1>"), std::string::npos);
  EXPECT_NE(page.find("&quot;&lt;x&gt;&quot;"), std::string::npos);
}

}  // namespace
}  // namespace memfleet::dashboard
