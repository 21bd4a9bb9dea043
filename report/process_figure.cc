#include "report/process_figure.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace memfleet::report {
namespace {

constexpr std::string_view kAppSummaryPrefix = "app_summary.";
constexpr std::string_view kHeapsPrefix = "heaps.";

const Kb* ReportFigure(const ProcessReport& p, std::string_view name) {
  if (name == "total_kb") return &p.total_kb;
  if (name == "pss_kb") return &p.pss_kb;
  if (name == "swap_pss_kb") return &p.swap_pss_kb;
  if (name == "gfxdev_kb") return &p.gfxdev_kb;
  if (name == "gl_kb") return &p.gl_kb;
  if (name == "dma_kb") return &p.dma_kb;
  if (name == "native_graphics_kb") return &p.native_graphics_kb;
  if (name == "non_graphics_kb") return &p.non_graphics_kb;
  if (name == "graphics_dma_kb") return &p.graphics_dma_kb;
  return nullptr;
}

int64_t HeapFigures::*HeapMember(std::string_view figure) {
  if (figure == "pss_kb") return &HeapFigures::pss_kb;
  if (figure == "swap_pss_kb") return &HeapFigures::swap_pss_kb;
  if (figure == "private_clean_kb") return &HeapFigures::private_clean_kb;
  if (figure == "private_dirty_kb") return &HeapFigures::private_dirty_kb;
  return nullptr;
}

bool IsHeapName(std::string_view heap) {
  return std::any_of(std::begin(kHeapNames), std::end(kHeapNames), [&](const char* h) { return heap == h; });
}

// "heaps.<heap>.<figure>" split; false when it is not that shape with a known heap and figure.
bool SplitHeapFigure(std::string_view name, std::string_view* heap, std::string_view* figure) {
  if (name.substr(0, kHeapsPrefix.size()) != kHeapsPrefix) return false;
  name.remove_prefix(kHeapsPrefix.size());
  const size_t dot = name.rfind('.');
  if (dot == std::string_view::npos) return false;
  *heap = name.substr(0, dot);
  *figure = name.substr(dot + 1);
  return IsHeapName(*heap) && HeapMember(*figure) != nullptr;
}

const AppSummaryField* SummaryField(std::string_view name) {
  if (name.substr(0, kAppSummaryPrefix.size()) != kAppSummaryPrefix) return nullptr;
  return FindAppSummaryField(name.substr(kAppSummaryPrefix.size()));
}

}  // namespace

const std::vector<std::string>& ProcessReportFigureNames() {
  static const std::vector<std::string> names = {"total_kb",           "pss_kb",          "swap_pss_kb",
                                                 "gfxdev_kb",          "gl_kb",           "dma_kb",
                                                 "native_graphics_kb", "non_graphics_kb", "graphics_dma_kb"};
  return names;
}

const std::vector<std::string>& HeapFigureNames() {
  static const std::vector<std::string> names = {"pss_kb", "swap_pss_kb", "private_clean_kb", "private_dirty_kb"};
  return names;
}

bool IsBreakdownFigureName(std::string_view name) {
  std::string_view heap, figure;
  return SummaryField(name) != nullptr || SplitHeapFigure(name, &heap, &figure);
}

bool IsProcessFigureName(std::string_view name) {
  return ReportFigure(ProcessReport(), name) != nullptr || IsBreakdownFigureName(name);
}

Kb ProcessFigureValue(const ProcessReport& p, std::string_view name) {
  if (const Kb* v = ReportFigure(p, name)) return *v;
  if (const AppSummaryField* f = SummaryField(name)) {
    if (!p.app_summary) return std::nullopt;
    return (*p.app_summary).*(f->member);
  }
  std::string_view heap, figure;
  if (!SplitHeapFigure(name, &heap, &figure) || !p.heaps) return std::nullopt;
  auto it = p.heaps->find(std::string(heap));
  return it == p.heaps->end() ? 0 : it->second.*HeapMember(figure);
}

std::optional<AppSummary> NamedAppSummary(const Report& report, std::string_view name) {
  std::optional<AppSummary> sum;
  for (const auto& [pid, p] : report.processes) {
    if (p.name != name) continue;
    if (!p.app_summary) return std::nullopt;
    if (sum) {
      *sum += *p.app_summary;
    } else {
      sum = p.app_summary;
    }
  }
  return sum;
}

std::string ProcessFigureNamesHint() {
  return absl::StrCat(absl::StrJoin(ProcessReportFigureNames(), ", "),
                      ", app_summary.<field> (java_heap_kb, native_heap_kb, code_kb, stack_kb, graphics_kb, "
                      "private_other_kb, system_kb, total_pss_kb, total_swap_pss_kb), heaps.<heap>.<figure> "
                      "(native, dalvik, so, ...; pss_kb, swap_pss_kb, private_clean_kb, private_dirty_kb)");
}

}  // namespace memfleet::report
