#include "cli/report_table.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "chart/figure_text.h"
#include "cli/output_format.h"

namespace memfleet::cli {
namespace {

using report::Kb;
using report::ProcessReport;
using report::Report;

std::string K(const Kb& v) { return FormatKbOrDash(v); }

std::string Pad(std::string s, size_t width, bool right) {
  if (s.size() >= width) return s;
  std::string fill(width - s.size(), ' ');
  return right ? fill + s : s + fill;
}

void Line(std::string& out, const std::string& label, const Kb& v, const std::string& note = "") {
  out += "  " + Pad(label, 18, false) + Pad(K(v), 12, true);
  if (!note.empty()) out += "   " + note;
  out += '\n';
}

std::string Ellipsize(const std::string& s, size_t width) {
  if (s.size() <= width) return s;
  return "..." + s.substr(s.size() - (width - 3));
}

std::string RenderReportText(const Report& r, const TableOptions& options) {
  std::string out;
  out += "device " + (r.device_id.empty() ? std::string("(no device id)") : r.device_id) + "  platform " +
         report::PlatformName(r.platform) + "  page " + std::to_string(r.page_size / 1024) + " KiB";
  if (!r.captured_at.empty()) out += "  captured " + r.captured_at;
  out += "\n\n";

  const report::DeviceReport& d = r.device;
  size_t cached = 0, unknown = 0;
  for (const auto& [pid, p] : r.processes) {
    if (p.cached) ++cached;
    if (!p.total_kb) ++unknown;
  }
  out += "Device                        kB\n";
  Line(out, "DDR", d.ddr_kb, d.ddr_estimated ? "estimated from MemTotal + GCMA" : "from capture.json");
  Line(out, "static reserved", d.static_reserved_kb, "firmware, modem, TEE carve-outs");
  Line(out, "kernel", d.kernel_kb, "incl. CMA held by drivers " + K(d.kernel_cma_kb));
  Line(out, "processes", d.processes_kb,
       std::to_string(r.processes.size()) + " processes; " + std::to_string(cached) + " cached left out" +
           (unknown ? "; " + std::to_string(unknown) + " unknown" : ""));
  Line(out, "total", d.total_kb, "device memory footprint");
  Line(out, "MemTotal", d.mem_total_kb, "GCMA " + K(d.gcma_kb));
  out += '\n';

  const std::vector<const ProcessReport*> procs = ProcessesByTotal(r, options.top_processes);
  const size_t shown = procs.size();
  out += "Processes by total_kb (kB)" +
         std::string(shown < r.processes.size() ? ", top " + std::to_string(shown) : "") +
         "; C = cached (oom_score_adj >= 900), not in the device total\n";
  out += "  " + Pad("PID", 7, true) + "  " + Pad("NAME", 36, false) + Pad("TOTAL", 11, true) +
         Pad("NON-GFX", 11, true) + Pad("GL", 10, true) + Pad("DMA", 10, true) + Pad("NATIVE-GFX", 12, true) +
         Pad("GFXDEV", 9, true) + Pad("ADJ", 7, true) + "\n";
  for (size_t i = 0; i < shown; ++i) {
    const ProcessReport& p = *procs[i];
    // Escaped before it is cut and padded, so the escapes count in its width.
    std::string name = Ellipsize(TerminalSafe(p.name), 34);
    out += (p.cached ? "C " : "  ") + Pad(std::to_string(p.pid), 7, true) + "  " + Pad(name, 36, false) +
           Pad(K(p.total_kb), 11, true) + Pad(K(p.non_graphics_kb), 11, true) + Pad(K(p.gl_kb), 10, true) +
           Pad(K(p.dma_kb), 10, true) + Pad(K(p.native_graphics_kb), 12, true) + Pad(K(p.gfxdev_kb), 9, true) +
           Pad(p.oom_score_adj ? std::to_string(*p.oom_score_adj) : chart::kNoValue, 7, true) + "\n";
  }
  out += '\n';

  const report::DumpsysView& v = r.dumpsys;
  out += "dumpsys meminfo view (Android " + std::to_string(v.android_version) + " formulas, vendor memtrack)\n";
  auto dline = [&](const std::string& label, const Kb& value, const char* key, const std::string& note) {
    std::string row = "  " + Pad(label, 18, false) + Pad(K(value), 12, true);
    auto dev = v.device_text_kb.find(key);
    if (dev != v.device_text_kb.end()) {
      auto diff = v.difference_kb.find(key);
      row += "   device " + FormatKb(dev->second);
      if (diff != v.difference_kb.end()) row += " (diff " + FormatKb(diff->second) + ")";
    } else if (!note.empty()) {
      row += "   " + note;
    }
    out += row + "\n";
  };
  dline("Total RAM", v.total_ram_kb, "total_ram_kb", "");
  dline("Free RAM", v.free_ram_kb, "free_ram_kb",
        K(v.cached_pss_kb) + " cached pss + " + K(v.cached_kernel_kb) + " cached kernel + " + K(v.free_kb) + " free");
  if (v.dmabuf_total_kb) {
    dline("DMA-BUF", v.dmabuf_total_kb, "dmabuf_total_kb",
          K(v.dmabuf_mapped_kb) + " mapped + " + K(v.dmabuf_unmapped_kb) + " unmapped");
  }
  if (v.gpu_private_kb) dline("GPU private", v.gpu_private_kb, "gpu_private_kb", "memtrack GL of pid 0");
  dline("Used RAM", v.used_ram_kb, "used_ram_kb", K(v.used_pss_kb) + " used pss + " + K(v.kernel_used_kb) + " kernel");
  dline("Lost RAM", v.lost_ram_kb, "lost_ram_kb", "");
  dline("ZRAM", v.zram_kb, "zram_kb", "");
  if (v.identity_holds) {
    out += std::string("  check: MemTotal = Free + Used + Lost + ZRAM - SwapPss ") +
           (*v.identity_holds ? "holds" : "DOES NOT hold") + "\n";
  }
  if (v.device_text_kb.empty()) out += "  (the capture has no cmd/dumpsys_meminfo to compare with)\n";
  out += '\n';

  out += "Warnings (" + std::to_string(r.warnings.size()) + ")\n";
  size_t wshown = options.max_warnings > 0 ? std::min(r.warnings.size(), static_cast<size_t>(options.max_warnings))
                                           : r.warnings.size();
  for (size_t i = 0; i < wshown; ++i) out += "  - " + r.warnings[i] + "\n";
  if (wshown < r.warnings.size()) {
    out += "  ... " + std::to_string(r.warnings.size() - wshown) + " more (--json shows all)\n";
  }
  return out;
}

}  // namespace

std::vector<const ProcessReport*> ProcessesByTotal(const Report& r, int top) {
  std::vector<const ProcessReport*> procs;
  for (const auto& [pid, p] : r.processes) procs.push_back(&p);
  std::stable_sort(procs.begin(), procs.end(), [](const ProcessReport* a, const ProcessReport* b) {
    int64_t ta = a->total_kb.value_or(-1), tb = b->total_kb.value_or(-1);
    return ta > tb;
  });
  if (top > 0 && procs.size() > static_cast<size_t>(top)) procs.resize(static_cast<size_t>(top));
  return procs;
}

std::string RenderReportTable(const Report& r, const TableOptions& options) {
  // Names, ids and warnings come from the device: escaped before they reach a terminal.
  return TerminalSafeLines(RenderReportText(r, options));
}

}  // namespace memfleet::cli
