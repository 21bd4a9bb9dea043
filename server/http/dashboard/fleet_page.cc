#include "server/http/dashboard/fleet_page.h"

#include <algorithm>
#include <functional>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "chart/figure_text.h"
#include "server/http/dashboard/html.h"

namespace memfleet::dashboard {
namespace {

struct Column {
  const char* key;
  const char* heading;
};
constexpr Column kColumns[] = {{"device_id", "Device"},          {"state", "State"},     {"model", "Model"},
                               {"platform", "Platform"},         {"build", "Build"},     {"tier", "Tier"},
                               {"last_capture", "Last capture"}, {"total", "Total (kB)"}};
constexpr char kSparklineHeading[] = "Last week";

// Orders a before b by the key's column; false when they tie.
using Less = std::function<bool(const FleetDevice&, const FleetDevice&)>;

Less LessFor(absl::string_view key) {
  if (key == "device_id") return [](const FleetDevice& a, const FleetDevice& b) { return a.device_id < b.device_id; };
  if (key == "state") return [](const FleetDevice& a, const FleetDevice& b) { return a.online > b.online; };
  if (key == "model") return [](const FleetDevice& a, const FleetDevice& b) { return a.model < b.model; };
  if (key == "platform") return [](const FleetDevice& a, const FleetDevice& b) { return a.platform < b.platform; };
  if (key == "build") return [](const FleetDevice& a, const FleetDevice& b) { return a.build < b.build; };
  if (key == "tier") return [](const FleetDevice& a, const FleetDevice& b) { return a.tier < b.tier; };
  if (key == "last_capture") {
    return [](const FleetDevice& a, const FleetDevice& b) { return a.last_capture_at < b.last_capture_at; };
  }
  if (key == "total") {
    return [](const FleetDevice& a, const FleetDevice& b) {
      return a.total_kb.has_value() && b.total_kb.has_value() && *a.total_kb < *b.total_kb;
    };
  }
  return nullptr;
}

std::string QueryOf(absl::string_view sort, const std::vector<std::string>& where) {
  std::string q = absl::StrCat("?sort=", UrlComponent(sort));
  for (const std::string& term : where) absl::StrAppend(&q, "&where=", UrlComponent(term));
  return q;
}

std::string HeaderRow(const FleetView& view) {
  std::string row = "<tr>";
  for (const Column& c : kColumns) {
    const bool ascending_now = view.sort == c.key;
    const std::string next = ascending_now ? absl::StrCat("-", c.key) : std::string(c.key);
    const char* arrow = ascending_now ? " ▲" : view.sort == absl::StrCat("-", c.key) ? " ▼" : "";
    absl::StrAppend(&row, "<th><a href=\"/", Html(QueryOf(next, view.where)), "\">", c.heading, arrow, "</a></th>");
  }
  return absl::StrCat(row, "<th>", kSparklineHeading, "</th></tr>\n");
}

std::string DeviceRow(const FleetDevice& d) {
  return absl::StrCat("<tr class=\"device\"><td><a href=\"", Html(DevicePath(d.device_id)), "\">", Html(d.device_id),
                      "</a></td>", d.online ? "<td class=\"online\">online</td>" : "<td class=\"offline\">offline</td>",
                      "<td>", TextOrNoValue(d.model), "</td><td>", TextOrNoValue(d.platform), "</td><td>",
                      TextOrNoValue(d.build), "</td><td>", TextOrNoValue(d.tier), "</td><td>",
                      d.last_capture_at.empty() ? chart::kNoCapture : Html(d.last_capture_at), "</td>",
                      KbCell(d.total_kb), "<td class=\"spark\">", SparklineSvg(d.recent_totals_kb), "</td></tr>\n");
}

std::string GroupTable(const std::vector<FleetGroup>& groups) {
  if (groups.empty()) return "<p class=\"note\">No device has a known total yet.</p>\n";
  std::string t =
      "<table class=\"groups\"><tr><th>Model</th><th>Devices</th><th>min (kB)</th><th>p50 (kB)</th>"
      "<th>p90 (kB)</th><th>max (kB)</th></tr>\n";
  for (const FleetGroup& g : groups) {
    const bool any = g.devices > 0;
    const auto kb = [any](int64_t v) { return KbCell(any ? report::Kb(v) : std::nullopt); };
    absl::StrAppend(&t, "<tr><td>", TextOrNoValue(g.model), "</td><td class=\"num\">",
                    chart::CountWithUnknown(g.devices, g.unknown), "</td>", kb(g.min_kb), kb(g.p50_kb), kb(g.p90_kb),
                    kb(g.max_kb), "</tr>\n");
  }
  t += "</table>\n";
  // As `memfleet fleet` says under its table: a model of both tiers is two populations in one row.
  for (const FleetGroup& g : groups) {
    const std::string group = g.model.empty() ? chart::kNoValue : g.model;
    if (g.tiers.Mixed()) {
      absl::StrAppend(&t, "<p class=\"warn tiers\">", Html(report::MixedTiersSentence(group, g.tiers)),
                      "; split it with where tier=kernel or tier=dumpsys</p>\n");
    } else if (g.tiers.PartlyUnknown()) {
      absl::StrAppend(&t, "<p class=\"warn tiers\">", Html(report::UnknownTiersSentence(group, g.tiers)), "</p>\n");
    }
  }
  return t;
}

std::string WhereForm(const FleetView& view) {
  return absl::StrCat(
      "<form class=\"where\" method=\"get\" action=\"/\"><input type=\"hidden\" name=\"sort\" value=\"",
      Html(view.sort), "\"><label>where <input type=\"text\" name=\"where\" value=\"",
      Html(view.where.empty() ? "" : view.where.front()),
      "\" placeholder=\"model=Pixel 8\"></label> <button type=\"submit\">Filter</button> "
      "<span class=\"note\">keys: model, platform, soc, build, device_id, tier (kernel or dumpsys); a trailing * "
      "matches a prefix</span>"
      "</form>\n",
      view.where.empty() ? ""
                         : absl::StrCat("<p>Devices where <b>", Html(absl::StrJoin(view.where, " and ")),
                                        "</b> — <a href=\"/\">all devices</a></p>\n"));
}

}  // namespace

absl::Status SortFleet(std::vector<FleetDevice>& rows, absl::string_view sort) {
  const bool descending = !sort.empty() && sort.front() == '-';
  const absl::string_view key = descending ? sort.substr(1) : sort;
  const Less less = LessFor(key);
  if (less == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot sort by \"", sort,
        "\": use device_id, state, model, platform, build, tier, last_capture or total (- first for descending)"));
  }
  std::sort(rows.begin(), rows.end(),
            [](const FleetDevice& a, const FleetDevice& b) { return a.device_id < b.device_id; });
  std::stable_sort(rows.begin(), rows.end(), [&](const FleetDevice& a, const FleetDevice& b) {
    if (key == "total" && a.total_kb.has_value() != b.total_kb.has_value()) return a.total_kb.has_value();
    return descending ? less(b, a) : less(a, b);
  });
  return absl::OkStatus();
}

std::string RenderFleetPage(const std::vector<FleetDevice>& rows, const std::vector<FleetGroup>& groups,
                            const FleetView& view) {
  std::string body = absl::StrCat("<h1>Fleet: ", rows.size(), rows.size() == 1 ? " device" : " devices", "</h1>\n");
  body += WhereForm(view);
  body += "<table class=\"fleet\">\n" + HeaderRow(view);
  for (const FleetDevice& d : rows) body += DeviceRow(d);
  body += "</table>\n<h2>Device total by model</h2>\n" + GroupTable(groups);
  return HtmlPage("Fleet", body);
}

}  // namespace memfleet::dashboard
