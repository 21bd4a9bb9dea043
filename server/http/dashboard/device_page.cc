#include "server/http/dashboard/device_page.h"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "chart/figure_text.h"
#include "report/capture_marks.h"
#include "server/http/dashboard/html.h"

namespace memfleet::dashboard {
namespace {

using report::Kb;

struct Part {
  const char* name;
  Kb kb;
  const char* colour;
};

// "3,567,646 kB", or chart::kNoValue alone: no unit on a value nobody knows.
std::string KbWithUnit(const Kb& kb) { return kb ? KbText(kb) + " kB" : std::string(chart::kNoValue); }

std::string Fixed(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string FigureRow(absl::string_view label, const Kb& kb, absl::string_view note) {
  return absl::StrCat("<tr><td>", label, "</td>", KbCell(kb), "<td class=\"note\">", Html(note), "</td></tr>\n");
}

std::string DeviceFigures(const report::Report& r) {
  const report::DeviceReport& d = r.device;
  size_t cached = 0;
  for (const auto& [pid, p] : r.processes) cached += p.cached ? 1 : 0;
  std::string t = "<table class=\"figures\"><tr><th>Part</th><th>kB</th><th></th></tr>\n";
  t += FigureRow("DDR", d.ddr_kb, d.ddr_estimated ? "estimated from MemTotal + GCMA" : "from capture.json");
  t += FigureRow("static reserved", d.static_reserved_kb, "firmware, modem, TEE carve-outs");
  t += FigureRow("kernel", d.kernel_kb, "incl. CMA held by drivers " + KbText(d.kernel_cma_kb));
  t += FigureRow("processes", d.processes_kb,
                 absl::StrCat(r.processes.size(), " processes; ", cached, " cached left out"));
  t += FigureRow("<b>total</b>", d.total_kb, "device memory footprint");
  t += FigureRow("MemTotal", d.mem_total_kb, "GCMA " + KbText(d.gcma_kb));
  return t + "</table>\n";
}

std::string ProcessTable(const report::Report& r, const std::string& device_id, const std::string& capture_id) {
  std::vector<const report::ProcessReport*> procs;
  for (const auto& [pid, p] : r.processes) procs.push_back(&p);
  std::stable_sort(procs.begin(), procs.end(), [](const report::ProcessReport* a, const report::ProcessReport* b) {
    return a->total_kb.value_or(-1) > b->total_kb.value_or(-1);
  });
  std::string t =
      "<p class=\"note\">C = cached (oom_score_adj &gt;= 900), not in the device total.</p>\n"
      "<table class=\"processes\"><tr><th></th><th>PID</th><th>Name</th><th>Total</th><th>Non-gfx</th><th>GL</th>"
      "<th>DMA</th><th>Native gfx</th><th>GFXDEV</th><th>ADJ</th></tr>\n";
  for (const report::ProcessReport* p : procs) {
    absl::StrAppend(&t, "<tr class=\"process\"><td>", p->cached ? "C" : "", "</td><td class=\"num\">", p->pid,
                    "</td><td><a href=\"", Html(ProcessPath(device_id, capture_id, p->name)), "\">", Html(p->name),
                    "</a></td>");
    for (const Kb* kb :
         {&p->total_kb, &p->non_graphics_kb, &p->gl_kb, &p->dma_kb, &p->native_graphics_kb, &p->gfxdev_kb}) {
      t += KbCell(*kb);
    }
    absl::StrAppend(&t,
                    p->oom_score_adj ? absl::StrCat("<td class=\"num\">", *p->oom_score_adj, "</td>")
                                     : absl::StrCat("<td class=\"num unset\">", chart::kNoValue, "</td>"),
                    "</tr>\n");
  }
  return t + "</table>\n";
}

std::string DumpsysTable(const report::DumpsysView& v) {
  std::string t = absl::StrCat("<p class=\"note\">Android ", v.android_version,
                               " formulas, vendor memtrack; compared with the device's own dumpsys text where the "
                               "capture has it.</p>\n<table class=\"dumpsys\"><tr><th>Line</th><th>memfleet (kB)</th>"
                               "<th>device (kB)</th><th>difference</th></tr>\n");
  const auto line = [&](absl::string_view label, const Kb& kb, const std::string& key) {
    const auto device = v.device_text_kb.find(key);
    const auto diff = v.difference_kb.find(key);
    absl::StrAppend(&t, "<tr><td>", label, "</td>", KbCell(kb), "<td class=\"num\">",
                    device == v.device_text_kb.end() ? "" : KbText(device->second), "</td><td class=\"num\">",
                    diff == v.difference_kb.end() ? "" : KbText(diff->second), "</td></tr>\n");
  };
  line("Total RAM", v.total_ram_kb, "total_ram_kb");
  line("Free RAM", v.free_ram_kb, "free_ram_kb");
  line("DMA-BUF", v.dmabuf_total_kb, "dmabuf_total_kb");
  line("GPU private", v.gpu_private_kb, "gpu_private_kb");
  line("Used RAM", v.used_ram_kb, "used_ram_kb");
  line("Lost RAM", v.lost_ram_kb, "lost_ram_kb");
  line("ZRAM", v.zram_kb, "zram_kb");
  t += "</table>\n";
  if (v.identity_holds) {
    absl::StrAppend(&t, "<p>check: MemTotal = Free + Used + Lost + ZRAM - SwapPss ",
                    *v.identity_holds ? "holds" : "<b class=\"warn\">does not hold</b>", "</p>\n");
  }
  if (v.device_text_kb.empty()) t += "<p class=\"note\">The capture has no dumpsys meminfo text to compare with.</p>\n";
  return t;
}

std::string TrendSection(const DevicePageInput& in) {
  std::string t = absl::StrCat("<h2>Total over the last ", in.trend_days, in.trend_days == 1 ? " day" : " days",
                               "</h2>\n<p class=\"note\">", "window: <a href=\"?days=1\">1 day</a> · ",
                               "<a href=\"?days=7\">7 days</a> · <a href=\"?days=30\">30 days</a> · ",
                               "<a href=\"?days=365\">a year</a></p>\n");
  if (in.total_trend.empty()) return t + "<p class=\"note\">No capture in this window has a known total.</p>\n";
  chart::ChartOptions options;
  options.title = absl::StrCat("total_kb on ", in.device.device_id);
  options.value_label = "total_kb";
  absl::StrAppend(&t, "<div class=\"chart\">", InlineSvg(chart::RenderSvgLineChart(in.total_trend, options)),
                  "</div>\n");
  std::vector<CaptureTier> tiers;
  for (const EarlierCapture& c : in.captures) tiers.push_back({c.captured_at, c.tier});
  return t + TierChangeNotes(tiers);
}

const char* MarkClass(report::CaptureMark::Kind kind) {
  switch (kind) {
    case report::CaptureMark::Kind::kTierChange:
      return "tier-change warn";
    case report::CaptureMark::Kind::kSweep:
      return "sweep";
    default:
      return "labels";
  }
}

// "tier dumpsys -> kernel: ... · sweep S · labels: run=1234 · agent labels: rack=7", worded as every view
// words them (report/capture_marks.h); "" for a periodic capture without labels nor a change of tier.
std::string CaptureMarks(const EarlierCapture& c, const std::string& tier_change) {
  std::vector<std::string> marks;
  for (const report::CaptureMark& mark : report::CaptureMarks(c.sweep_id, c.labels, c.agent_labels, tier_change)) {
    marks.push_back(absl::StrCat("<span class=\"", MarkClass(mark.kind), "\">", Html(mark.text), "</span>"));
  }
  return absl::StrJoin(marks, report::kCaptureMarkSeparator);
}

std::string CaptureList(const DevicePageInput& in) {
  std::string t = absl::StrCat("<h2>Captures (", in.captures.size(), ")</h2>\n<table class=\"captures\">",
                               "<tr><th>Captured</th><th>Total (kB)</th><th>Marks</th></tr>\n");
  std::vector<std::string> tiers;
  for (const EarlierCapture& c : in.captures) tiers.push_back(c.tier);
  const std::vector<std::string> tier_changes = report::TierChanges(tiers);  // oldest first, as `captures`
  for (auto it = in.captures.rbegin(); it != in.captures.rend(); ++it) {
    absl::StrAppend(&t, "<tr", it->captured_at == in.captured_at ? " class=\"this\"" : "", "><td><a href=\"",
                    Html(DevicePath(in.device.device_id)), "?at=", UrlComponent(it->captured_at), "\">",
                    Html(it->captured_at), "</a></td>", KbCell(it->total_kb), "<td class=\"marks\">",
                    CaptureMarks(*it, tier_changes[static_cast<size_t>(in.captures.rend() - it - 1)]), "</td></tr>\n");
  }
  return t + "</table>\n";
}

std::string Warnings(const std::vector<std::string>& warnings) {
  std::string t = absl::StrCat("<h2>Warnings (", warnings.size(), ")</h2>\n<ul class=\"warnings\">\n");
  for (const std::string& w : warnings) absl::StrAppend(&t, "<li class=\"warn\">", Html(w), "</li>\n");
  return t + "</ul>\n";
}

}  // namespace

std::string BreakdownBarSvg(const report::DeviceReport& d) {
  const Part parts[] = {{"static reserved", d.static_reserved_kb, "#8d6e63"},
                        {"kernel", d.kernel_kb, "#ffa726"},
                        {"processes", d.processes_kb, "#42a5f5"}};
  const Kb whole = d.ddr_kb ? d.ddr_kb : d.total_kb;
  constexpr double kWidth = 800, kBarHeight = 28;
  std::string svg = absl::StrCat(
      "<svg class=\"breakdown\" xmlns=\"http://www.w3.org/2000/svg\" width=\"", kWidth, "\" height=\"", kBarHeight + 30,
      "\" font-family=\"sans-serif\" font-size=\"12\">", "<rect x=\"0\" y=\"0\" width=\"", kWidth, "\" height=\"",
      kBarHeight, "\" fill=\"#eceff1\" stroke=\"#90a4ae\"><title>DDR ", KbWithUnit(d.ddr_kb), "</title></rect>");
  double x = 0, legend_x = 0;
  for (const Part& p : parts) {
    if (p.kb && whole && *whole > 0) {
      const double w = std::clamp(static_cast<double>(*p.kb) / static_cast<double>(*whole), 0.0, 1.0) * kWidth;
      absl::StrAppend(&svg, "<rect x=\"", Fixed(x), "\" y=\"0\" width=\"", Fixed(std::min(w, kWidth - x)),
                      "\" height=\"", kBarHeight, "\" fill=\"", p.colour, "\"><title>", p.name, " ", KbWithUnit(p.kb),
                      "</title></rect>");
      x = std::min(kWidth, x + w);
    }
    absl::StrAppend(&svg, "<rect x=\"", Fixed(legend_x), "\" y=\"", kBarHeight + 10,
                    "\" width=\"12\" height=\"12\" fill=\"", p.colour, "\"/><text x=\"", Fixed(legend_x + 16),
                    "\" y=\"", kBarHeight + 21, "\">", p.name, " ", KbWithUnit(p.kb), "</text>");
    legend_x += 230;
  }
  return svg + "</svg>\n";
}

std::string RenderDevicePage(const DevicePageInput& in) {
  const FleetDevice& d = in.device;
  std::string body =
      absl::StrCat("<h1>Device ", Html(d.device_id), "</h1>\n<p>model ", TextOrNoValue(d.model), " · platform ",
                   TextOrNoValue(d.platform), " · build ", TextOrNoValue(d.build), " · ",
                   d.online ? "<span class=\"online\">online</span>" : "<span class=\"offline\">offline</span>",
                   "</p>\n<p>Capture <code>", Html(in.capture_id), "</code> taken ", Html(in.captured_at), "</p>\n");
  absl::StrAppend(&body, "<h2>Breakdown</h2>\n", BreakdownBarSvg(in.report.device), DeviceFigures(in.report));
  absl::StrAppend(&body, "<h2>Processes</h2>\n", ProcessTable(in.report, d.device_id, in.capture_id));
  absl::StrAppend(&body, "<h2>dumpsys meminfo view</h2>\n", DumpsysTable(in.report.dumpsys));
  body += Warnings(in.report.warnings);
  body += TrendSection(in) + CaptureList(in);
  return HtmlPage(absl::StrCat("Device ", d.device_id), body);
}

}  // namespace memfleet::dashboard
