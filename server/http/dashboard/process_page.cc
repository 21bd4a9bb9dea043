#include "server/http/dashboard/process_page.h"

#include <string_view>

#include "absl/strings/str_cat.h"
#include "report/process_figure.h"
#include "server/http/dashboard/html.h"

namespace memfleet::dashboard {
namespace {

// The figures the page offers to chart besides the one shown: the report's headline split and every
// App Summary field (any other name works in ?metric= too).
const std::vector<std::string>& ChartableFigures() {
  static const std::vector<std::string> figures = [] {
    std::vector<std::string> f = {"total_kb", "non_graphics_kb", "graphics_dma_kb", "gl_kb", "dma_kb"};
    for (const report::AppSummaryField& s : report::kAppSummaryFields)
      f.push_back(std::string("app_summary.") + s.name);
    return f;
  }();
  return figures;
}

std::string MetricLinks(const ProcessPageInput& in) {
  std::string out = "<p class=\"metrics\">Chart: ";
  bool first = true;
  for (const std::string& figure : ChartableFigures()) {
    absl::StrAppend(&out, first ? "" : " · ");
    first = false;
    if (figure == in.metric) {
      absl::StrAppend(&out, "<b>", Html(figure), "</b>");
    } else {
      // By the capture the name came from when there is one: a long name's typed address may not fit.
      const std::string path = in.name_capture_id.empty()
                                   ? absl::StrCat(DevicePath(in.device_id), "/process/", UrlComponent(in.process_name))
                                   : ProcessPath(in.device_id, in.name_capture_id, in.process_name);
      absl::StrAppend(&out, "<a href=\"", Html(path), "?metric=", Html(UrlComponent(figure)), "\">", Html(figure),
                      "</a>");
    }
  }
  return out + "</p>\n";
}

std::string FleetTable(const ProcessPageInput& in) {
  if (in.same_model.empty()) return "<p class=\"note\">No device of this model has this process.</p>\n";
  std::string t = "<table class=\"same-model\"><tr><th>Device</th><th>Captured</th><th>Total (kB)</th></tr>\n";
  for (const ProcessOnDevice& d : in.same_model) {
    const std::string& named_in = in.name_capture_id.empty() ? d.capture_id : in.name_capture_id;
    absl::StrAppend(&t, "<tr", d.device_id == in.device_id ? " class=\"this\"" : "", "><td><a href=\"",
                    Html(ProcessPath(d.device_id, named_in, in.process_name)), "\">", Html(d.device_id),
                    "</a></td><td>", Html(d.captured_at), "</td>", KbCell(d.total_kb), "</tr>\n");
  }
  return t + "</table>\n";
}

std::string MetricChart(const ProcessPageInput& in) {
  std::string body = absl::StrCat("<h2>", Html(in.metric), " over time</h2>\n", MetricLinks(in));
  if (in.history.empty()) {
    return body + "<p class=\"note\">No capture of this device has a known value of this figure for this process" +
           (report::IsBreakdownFigureName(in.metric) ? " (heaps and the App Summary need full smaps: memfleet sweep "
                                                       "--full-smaps)"
                                                     : "") +
           ".</p>\n";
  }
  chart::ChartOptions options;
  options.title = absl::StrCat(in.process_name, " ", in.metric, " on ", in.device_id);
  options.value_label = in.metric;
  absl::StrAppend(&body, "<div class=\"chart\">", InlineSvg(chart::RenderSvgLineChart(in.history, options)),
                  "</div>\n");
  absl::StrAppend(
      &body, "<p class=\"note\">", in.history.size(), in.history.size() == 1 ? " capture" : " captures", "; latest ",
      KbText(in.history.back().value_kb), " kB",
      in.unknown_samples > 0 ? absl::StrCat("; ", in.unknown_samples, " with the figure unknown (not drawn)") : "",
      "</p>\n");
  return body + TierChangeNotes(in.history_tiers);
}

// The parts of the App Summary that add up to its TOTAL PSS, in dumpsys' order.
std::vector<std::string> SummaryParts() {
  std::vector<std::string> parts;
  for (size_t i = 0; i < report::kAppSummaryParts; ++i) parts.push_back(report::kAppSummaryFields[i].label);
  return parts;
}

std::string SummaryChart(const ProcessPageInput& in) {
  std::string body = "<h2>App Summary over time</h2>\n";
  if (in.summary_history.empty()) {
    return body +
           "<p class=\"note\">No capture of this process has its heaps: they need full smaps (memfleet "
           "sweep --full-smaps, or memfleet-agent --smaps full).</p>\n";
  }
  chart::ChartOptions options;
  options.title = absl::StrCat(in.process_name, " App Summary on ", in.device_id);
  options.value_label = "kB";
  absl::StrAppend(
      &body, "<div class=\"chart summary\">",
      InlineSvg(chart::RenderSvgStackedChart(in.summary_history, SummaryParts(), options)), "</div>\n",
      "<p class=\"note\">", in.summary_history.size(), in.summary_history.size() == 1 ? " capture" : " captures",
      " with full smaps; the parts add up to TOTAL PSS (dumpsys' App Summary without memtrack)",
      in.summary_missing > 0 ? absl::StrCat("; ", in.summary_missing, " without (not drawn)") : "", "</p>\n");
  return body;
}

std::string BreakdownTables(const ProcessPageInput& in) {
  if (!in.latest_breakdown || !in.latest_breakdown->heaps) return "";
  const report::ProcessReport& p = *in.latest_breakdown;
  std::string body = absl::StrCat("<h2>Heaps at ", Html(in.latest_breakdown_at), "</h2>\n");
  body +=
      "<table class=\"heaps\"><tr><th>Heap</th><th>Pss (kB)</th><th>SwapPss (kB)</th><th>Private dirty (kB)</th>"
      "<th>Private clean (kB)</th></tr>\n";
  for (const char* heap : report::kHeapNames) {
    auto it = p.heaps->find(heap);
    if (it == p.heaps->end()) continue;
    const report::HeapFigures& h = it->second;
    absl::StrAppend(&body, "<tr data-heap=\"", Html(heap), "\"><td>", Html(report::HeapLabel(heap)), "</td>",
                    KbCell(h.pss_kb), KbCell(h.swap_pss_kb), KbCell(h.private_dirty_kb), KbCell(h.private_clean_kb),
                    "</tr>\n");
  }
  absl::StrAppend(&body, "<tr><td>GL (gl_kb)</td>", KbCell(p.gl_kb),
                  "<td></td><td></td><td></td></tr>\n<tr><td>DMA-BUF (dma_kb)</td>", KbCell(p.dma_kb),
                  "<td></td><td></td><td></td></tr>\n</table>\n");
  if (p.app_summary) {
    body += "<table class=\"app-summary\"><tr><th>App Summary</th><th>kB</th></tr>\n";
    for (const report::AppSummaryField& f : report::kAppSummaryFields) {
      absl::StrAppend(&body, "<tr data-field=\"", Html(f.name), "\"><td>", Html(f.label), "</td>",
                      KbCell((*p.app_summary).*(f.member)), "</tr>\n");
    }
    body += "</table>\n";
  }
  return body;
}

}  // namespace

std::string RenderProcessPage(const ProcessPageInput& in) {
  std::string body = absl::StrCat("<h1>", Html(in.process_name), " on <a href=\"", Html(DevicePath(in.device_id)),
                                  "\">", Html(in.device_id), "</a></h1>\n");
  absl::StrAppend(&body, MetricChart(in), SummaryChart(in), BreakdownTables(in));
  absl::StrAppend(&body, "<h2>On the fleet's devices of model ", TextOrNoValue(in.model), "</h2>\n", FleetTable(in));
  return HtmlPage(absl::StrCat(in.process_name, " on ", in.device_id), body);
}

}  // namespace memfleet::dashboard
