#include "server/http/metrics/device_figures.h"

#include <algorithm>
#include <map>

namespace memfleet::metrics {
namespace {

// Null as soon as one part is null: a sum that silently skipped a process would understate it.
void AddKb(report::Kb& sum, const report::Kb& part, bool first) {
  if (first) {
    sum = part;
  } else if (sum.has_value() && part.has_value()) {
    *sum += *part;
  } else {
    sum.reset();
  }
}

// Null as soon as one process has none, as for the figures above.
void AddSummary(std::optional<report::AppSummary>& sum, const std::optional<report::AppSummary>& part, bool first) {
  if (first || !sum.has_value() || !part.has_value()) {
    sum = first ? part : std::nullopt;
    return;
  }
  *sum += *part;
}

std::vector<ProcessFigures> ByName(const std::map<int, report::ProcessReport>& processes) {
  std::map<std::string, ProcessFigures> by_name;
  for (const auto& [pid, p] : processes) {
    ProcessFigures& f = by_name[p.name];
    const bool first = f.process_count == 0;
    f.name = p.name;
    AddKb(f.total_kb, p.total_kb, first);
    AddKb(f.gl_kb, p.gl_kb, first);
    AddKb(f.dma_kb, p.dma_kb, first);
    AddKb(f.native_graphics_kb, p.native_graphics_kb, first);
    AddKb(f.non_graphics_kb, p.non_graphics_kb, first);
    AddSummary(f.app_summary, p.app_summary, first);
    ++f.process_count;
  }
  std::vector<ProcessFigures> out;
  out.reserve(by_name.size());
  for (auto& [name, f] : by_name) out.push_back(std::move(f));
  return out;
}

bool Bigger(const ProcessFigures& a, const ProcessFigures& b) {
  if (a.total_kb.has_value() != b.total_kb.has_value()) return a.total_kb.has_value();
  if (a.total_kb != b.total_kb) return *a.total_kb > *b.total_kb;
  return a.name < b.name;
}

}  // namespace

DeviceFigures FiguresOf(const report::Report& report, size_t top_processes) {
  DeviceFigures f;
  f.platform = report::PlatformName(report.platform);
  f.total_kb = report.device.total_kb;
  f.static_reserved_kb = report.device.static_reserved_kb;
  f.kernel_kb = report.device.kernel_kb;
  f.kernel_cma_kb = report.device.kernel_cma_kb;
  f.gcma_kb = report.device.gcma_kb;
  f.processes_kb = report.device.processes_kb;
  if (top_processes == 0) return f;
  std::vector<ProcessFigures> all = ByName(report.processes);
  const size_t keep = std::min(top_processes, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(keep), all.end(), Bigger);
  all.resize(keep);
  f.top_processes = std::move(all);
  return f;
}

}  // namespace memfleet::metrics
