#include "server/http/dashboard/process_page.h"

#include "absl/strings/str_cat.h"
#include "server/http/dashboard/html.h"

namespace memfleet::dashboard {
namespace {

std::string FleetTable(const ProcessPageInput& in) {
  if (in.same_model.empty()) return "<p class=\"note\">No device of this model has this process.</p>\n";
  std::string t = "<table class=\"same-model\"><tr><th>Device</th><th>Captured</th><th>Total (kB)</th></tr>\n";
  for (const ProcessOnDevice& d : in.same_model) {
    const std::string& named_in = in.name_capture_id.empty() ? d.capture_id : in.name_capture_id;
    absl::StrAppend(&t, "<tr", d.device_id == in.device_id ? " class=\"this\"" : "", "><td><a href=\"",
                    Html(ProcessPath(d.device_id, named_in, in.process_name)), "\">", Html(d.device_id), "</a></td><td>",
                    Html(d.captured_at), "</td><td class=\"num", d.total_kb ? "" : " unknown", "\">",
                    KbText(d.total_kb), "</td></tr>\n");
  }
  return t + "</table>\n";
}

}  // namespace

std::string RenderProcessPage(const ProcessPageInput& in) {
  std::string body = absl::StrCat("<h1>", Html(in.process_name), " on <a href=\"", Html(DevicePath(in.device_id)),
                                  "\">", Html(in.device_id), "</a></h1>\n<h2>total_kb over time</h2>\n");
  if (in.history.empty()) {
    body += "<p class=\"note\">No capture of this device has a known total for this process.</p>\n";
  } else {
    chart::ChartOptions options;
    options.title = absl::StrCat(in.process_name, " total_kb on ", in.device_id);
    options.value_label = "total_kb";
    absl::StrAppend(&body, "<div class=\"chart\">", InlineSvg(chart::RenderSvgLineChart(in.history, options)),
                    "</div>\n");
    absl::StrAppend(&body, "<p class=\"note\">", in.history.size(), in.history.size() == 1 ? " capture" : " captures", "; latest ",
                    KbText(in.history.back().value_kb), " kB",
                    in.unknown_samples > 0 ? absl::StrCat("; ", in.unknown_samples, " with the figure unknown (not drawn)") : "",
                    "</p>\n");
  }
  absl::StrAppend(&body, "<h2>On the fleet's devices of model ", TextOrUnknown(in.model), "</h2>\n", FleetTable(in));
  return HtmlPage(absl::StrCat(in.process_name, " on ", in.device_id), body);
}

}  // namespace memfleet::dashboard
