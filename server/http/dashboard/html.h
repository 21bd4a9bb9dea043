// The pieces every dashboard page is made of: escaping (each value from a phone goes through Html()),
// links with percent-encoded path segments and query values, figure cells, and the page shell with its
// inline style sheet. No scripts and nothing fetched from elsewhere: labs are often offline.
//
//   std::string page = HtmlPage("Fleet", "<h1>" + Html(device_id) + "</h1>");
//
// Pure; thread-safe.
#ifndef MEMFLEET_SERVER_HTTP_DASHBOARD_HTML_H_
#define MEMFLEET_SERVER_HTTP_DASHBOARD_HTML_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "report/report.h"

namespace memfleet::dashboard {

// Text for an HTML text node or a double-quoted attribute value: & < > " ' as entities, control bytes
// as spaces.
std::string Html(absl::string_view text);

// A path segment or query value: everything but A-Z a-z 0-9 - . _ ~ as %XX (so '/' in a process name
// stays inside its segment).
std::string UrlComponent(absl::string_view text);

// /device/<id>, encoded; and a process's page on that device by a stored capture that holds its name
// and the name's key (/device/<id>/capture/<capture id>/process/<ProcessKey(name)>): bounded whatever
// the name's length.
std::string DevicePath(absl::string_view device_id);
std::string ProcessPath(absl::string_view device_id, absl::string_view capture_id, absl::string_view process_name);

// "No value" as the pages write it: chart::kNoValue ("-", as the CLI's tables write it), muted (class
// "unset"). Red is for problems (a budget over, a warning), never for a value that is simply not known.
std::string NoValue();

// Device text as the pages write it: escaped, or NoValue() when the device did not say ("" from its
// agent).
std::string TextOrNoValue(absl::string_view text);

// A figure as plain text: "3,567,646" (kB), or chart::kNoValue for a null figure (never a 0). For SVG
// text and notes; a table cell is KbCell.
std::string KbText(const report::Kb& kb);

// A figure's table cell: <td class="num">3,567,646</td>, or a muted <td class="num unset">-</td>.
std::string KbCell(const report::Kb& kb);

// A line of `values` as a small inline SVG (width × height px), scaled so the smallest is at the bottom and
// the largest at the top; a flat series is a line through the middle, an unknown value a gap. "" for no
// known value.
std::string SparklineSvg(const std::vector<report::Kb>& values, int width_px = 120, int height_px = 24);

// An SVG document (chart::RenderSvgLineChart) as an element of a page: without its XML declaration.
std::string InlineSvg(std::string svg);

// A capture of a trend chart: when it was taken and the tier stored with it ("" unknown).
struct CaptureTier {
  std::string captured_at;
  std::string tier;
};

// Under a trend chart, a warning per capture whose tier is not that of the captures before it
// (report::TierChanges): <p class="warn tier-change">at TIME: tier dumpsys -> kernel: figures before and
// after do not compare</p>. `captures` oldest first; "" when the chart crosses no change of tier.
std::string TierChangeNotes(const std::vector<CaptureTier>& captures);

// A whole document: title, the navigation bar, `body_html` (already escaped), inline CSS. The bar is a
// visitor's (a Log in link).
std::string HtmlPage(absl::string_view title, absl::string_view body_html);

// An HtmlPage for someone logged in: its bar says so, with the token's name, and has the Log out button
// (POST /logout) where a visitor's has Log in.
std::string LoggedInPage(std::string page_html, absl::string_view token_name);

}  // namespace memfleet::dashboard

#endif  // MEMFLEET_SERVER_HTTP_DASHBOARD_HTML_H_
