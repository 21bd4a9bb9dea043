#include "server/http/dashboard/baselines_page.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "chart/figure_text.h"
#include "server/http/dashboard/html.h"

namespace memfleet::dashboard {
namespace {

std::string Kb(int64_t kb) { return Html(chart::FormatKb(kb)); }

std::string Row(const BaselineBudgetRow& r) {
  const bool over = r.devices_over > 0;
  const std::string what = r.process.empty() ? absl::StrCat(Html(r.department), " (department)") : Html(r.process);
  std::string worst = NoValue();
  if (r.devices_checked > 0) {
    worst = absl::StrCat(Kb(r.worst_value_kb), " on <a href=\"", Html(DevicePath(r.worst_device)), "\">",
                         Html(r.worst_device), "</a>");
  }
  return absl::StrCat("<tr", over ? " class=\"over\"" : "", "><td>", TextOrNoValue(r.model), "</td><td>",
                      TextOrNoValue(r.build), "</td><td>", what, "</td><td>", Html(r.budget), "</td><td class=\"num\">",
                      Kb(r.budget_kb), "</td><td class=\"num\">",
                      chart::PartOfCountWithUnknown(r.devices_over, r.devices_checked, r.devices_unknown),
                      "</td><td class=\"num\">", worst, "</td><td class=\"num\">",
                      r.devices_checked > 0 ? Kb(r.worst_over_kb) : NoValue(), "</td></tr>\n");
}

std::string Table(const std::vector<const BaselineBudgetRow*>& rows) {
  std::string t =
      "<table class=\"baseline\"><tr><th>Model</th><th>Build</th><th>Process</th><th>Budget</th>"
      "<th>Budget (kB)</th><th>Devices over</th><th>Worst (kB)</th><th>Over by (kB)</th></tr>\n";
  for (const BaselineBudgetRow* r : rows) t += Row(*r);
  return t + "</table>\n";
}

}  // namespace

std::string RenderBaselinesPage(const BaselinesPageInput& in) {
  if (!in.absent.empty()) {
    return HtmlPage("Baselines", absl::StrCat("<h1>Baselines</h1>\n<p class=\"note\">", Html(in.absent), "</p>\n"));
  }
  std::vector<const BaselineBudgetRow*> over, within;
  for (const BaselineBudgetRow& r : in.rows) (r.devices_over > 0 ? over : within).push_back(&r);
  // The worst excess first: what to look at before anything else.
  std::stable_sort(over.begin(), over.end(), [](const BaselineBudgetRow* a, const BaselineBudgetRow* b) {
    return a->worst_over_kb > b->worst_over_kb;
  });
  std::string body = absl::StrCat(
      "<h1>Baseline ", Html(in.name), " (version ", in.version, ", scheme ", in.scheme,
      ")</h1>\n<p>Checked against the latest report of ", in.devices, in.devices == 1 ? " device" : " devices",
      in.devices_not_applicable > 0 ? absl::StrCat("; ", in.devices_not_applicable, " it does not apply to") : "",
      in.unbudgeted > 0 ? absl::StrCat("; ", in.unbudgeted, " processes without a budget") : "", ".</p>\n");
  absl::StrAppend(&body, "<h2>Over budget: ", over.size(), "</h2>\n");
  body += over.empty() ? "<p class=\"note\">Every checked device is within every budget.</p>\n" : Table(over);
  absl::StrAppend(&body, "<h2>Within budget: ", within.size(), "</h2>\n");
  if (!within.empty()) body += Table(within);
  return HtmlPage("Baselines", body);
}

}  // namespace memfleet::dashboard
