// A process figure by the name every view uses for it — `memfleet trend --metric`, `regressions`, the
// baseline check, the dashboard: a figure of the report ("total_kb"), an App Summary field
// ("app_summary.native_heap_kb") or one figure of one heap ("heaps.dalvik.pss_kb").
//
//   if (!IsProcessFigureName(name)) return Invalid(...);
//   report::Kb v = ProcessFigureValue(process, "app_summary.native_heap_kb");   // null without full smaps
//
// Pure.
#ifndef MEMFLEET_REPORT_PROCESS_FIGURE_H_
#define MEMFLEET_REPORT_PROCESS_FIGURE_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report/report.h"

namespace memfleet::report {

// The report's own process figures, in the report's order: total_kb, pss_kb, swap_pss_kb, gfxdev_kb,
// gl_kb, dma_kb, native_graphics_kb, non_graphics_kb, graphics_dma_kb.
const std::vector<std::string>& ProcessReportFigureNames();

// The figures of one heap: pss_kb, swap_pss_kb, private_clean_kb, private_dirty_kb.
const std::vector<std::string>& HeapFigureNames();

// A report figure, "app_summary.<field>" or "heaps.<heap>.<figure>" (kHeapNames, HeapFigureNames()).
bool IsProcessFigureName(std::string_view name);
// "app_summary.<field>" or "heaps.<heap>.<figure>": a figure only full smaps gives.
bool IsBreakdownFigureName(std::string_view name);

// The figure's value; nullopt when it is null in the report (no full smaps for a breakdown figure) or the
// name is not a figure. A heap the process does not use (absent from `heaps`) is 0.
Kb ProcessFigureValue(const ProcessReport& p, std::string_view name);

// The App Summary of every process named `name` summed; nullopt when none is there or one has none (a
// sum that skipped a process would understate it).
std::optional<AppSummary> NamedAppSummary(const Report& report, std::string_view name);

// What the names look like, for an error message: "total_kb, pss_kb, ..., app_summary.<field>, heaps.<heap>.<figure>".
std::string ProcessFigureNamesHint();

}  // namespace memfleet::report

#endif  // MEMFLEET_REPORT_PROCESS_FIGURE_H_
