#include "server/http/dashboard/html.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "chart/chart.h"
#include "chart/figure_text.h"
#include "report/capture_marks.h"
#include "server/http/dashboard/target.h"

namespace memfleet::dashboard {
namespace {

constexpr char kStyle[] = R"css(
body { font-family: sans-serif; font-size: 14px; margin: 0; color: #222; background: #fafafa; }
nav { background: #263238; padding: 8px 16px; }
nav a { color: #fff; margin-right: 18px; text-decoration: none; font-weight: bold; }
nav form { display: inline; }
nav button { background: none; border: none; padding: 0; color: #fff; font: inherit; font-weight: bold; cursor: pointer; }
nav .who { color: #cfd8dc; margin-right: 18px; }
main { padding: 12px 20px; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 24px; }
table { border-collapse: collapse; background: #fff; margin: 6px 0; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; }
th { background: #eceff1; } th a { color: #222; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.online { color: #2e7d32; } .offline { color: #9e9e9e; }
.unset { color: #9e9e9e; }
tr.over td { background: #ffebee; }
.warn { color: #bf360c; }
.note { color: #555; }
form.where input[type=text] { width: 28em; }
)css";

// The account part of the bar, at its end: what HtmlPage writes, and what LoggedInPage puts in its place.
constexpr char kVisitorAccount[] = "<a href=\"/login\">Log in</a></nav>";

}  // namespace

std::string Html(absl::string_view text) { return chart::XmlEscape(std::string_view(text.data(), text.size())); }

std::string UrlComponent(absl::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    const bool plain = (u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z') || (u >= '0' && u <= '9') || u == '-' ||
                       u == '.' || u == '_' || u == '~';
    if (plain) {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out;
}

std::string DevicePath(absl::string_view device_id) { return absl::StrCat("/device/", UrlComponent(device_id)); }

std::string ProcessPath(absl::string_view device_id, absl::string_view capture_id, absl::string_view process_name) {
  return absl::StrCat(DevicePath(device_id), "/capture/", UrlComponent(capture_id), "/process/",
                      ProcessKey(process_name));
}

std::string NoValue() { return absl::StrCat("<span class=\"unset\">", chart::kNoValue, "</span>"); }

std::string TextOrNoValue(absl::string_view text) { return text.empty() ? NoValue() : Html(text); }

std::string KbText(const report::Kb& kb) { return kb ? chart::FormatKb(*kb) : std::string(chart::kNoValue); }

std::string KbCell(const report::Kb& kb) {
  return absl::StrCat("<td class=\"num", kb ? "" : " unset", "\">", KbText(kb), "</td>");
}

std::string SparklineSvg(const std::vector<report::Kb>& values, int width_px, int height_px) {
  std::optional<int64_t> lo, hi;
  for (const report::Kb& v : values) {
    if (!v) continue;
    lo = lo ? std::min(*lo, *v) : *v;
    hi = hi ? std::max(*hi, *v) : *v;
  }
  if (!lo) return "";
  const double step = values.size() > 1 ? (width_px - 4.0) / static_cast<double>(values.size() - 1) : 0;
  std::string lines, segment;
  const auto flush = [&] {
    if (!segment.empty())
      absl::StrAppend(&lines, "<polyline fill=\"none\" stroke=\"#1f77b4\" points=\"", segment, "\"/>");
    segment.clear();
  };
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i]) {
      flush();
      continue;
    }
    // long double: hi - lo may not fit in int64.
    const long double spread = static_cast<long double>(*hi) - static_cast<long double>(*lo);
    const double frac = spread > 0 ? static_cast<double>((static_cast<long double>(*values[i]) - *lo) / spread) : 0.5;
    const double y = height_px - 2 - frac * (height_px - 4);
    // One value: a short level stroke in the middle, so it shows at all.
    for (const double x : values.size() > 1 ? std::vector<double>{2 + step * static_cast<double>(i)}
                                            : std::vector<double>{width_px / 2.0 - 3, width_px / 2.0 + 3}) {
      char point[48];
      std::snprintf(point, sizeof point, "%.1f,%.1f", x, y);
      absl::StrAppend(&segment, segment.empty() ? "" : " ", point);
    }
  }
  flush();
  return absl::StrCat("<svg class=\"sparkline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"", width_px,
                      "\" height=\"", height_px, "\">", lines, "</svg>");
}

std::string InlineSvg(std::string svg) {
  if (svg.rfind("<?xml", 0) == 0) svg.erase(0, svg.find('\n') + 1);
  return svg;
}

std::string TierChangeNotes(const std::vector<CaptureTier>& captures) {
  std::vector<std::string> tiers;
  tiers.reserve(captures.size());
  for (const CaptureTier& c : captures) tiers.push_back(c.tier);
  const std::vector<std::string> changes = report::TierChanges(tiers);
  std::string notes;
  for (size_t i = 0; i < changes.size(); ++i) {
    if (changes[i].empty()) continue;
    absl::StrAppend(&notes, "<p class=\"warn tier-change\">at ", Html(captures[i].captured_at), ": ", Html(changes[i]),
                    "</p>\n");
  }
  return notes;
}

std::string HtmlPage(absl::string_view title, absl::string_view body_html) {
  return absl::StrCat("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>", Html(title),
                      " — memfleet</title><style>", kStyle, "</style></head>\n<body><nav><a href=\"/\">Fleet</a>",
                      "<a href=\"/baselines\">Baselines</a>", kVisitorAccount, "\n<main>\n", body_html,
                      "</main></body></html>\n");
}

std::string LoggedInPage(std::string page_html, absl::string_view token_name) {
  // The bar comes before the body, so the first occurrence is the bar's (and body text is escaped).
  const size_t at = page_html.find(kVisitorAccount);
  if (at == std::string::npos) return page_html;
  page_html.replace(at, sizeof(kVisitorAccount) - 1,
                    absl::StrCat("<span class=\"who\">logged in as ", Html(token_name),
                                 "</span><form method=\"post\" action=\"/logout\"><button type=\"submit\">Log out"
                                 "</button></form></nav>"));
  return page_html;
}

}  // namespace memfleet::dashboard
