// The baseline check (docs/accounting.md section 6): which budget each process or department gets under
// scheme 1 or 2, and, over a set of per-device reports, every process or department over budget per
// device model and build — by how much, on how many devices, and the worst device.
//
//   Assignments a = AssignBudgets(baseline, Scheme::k2);
//   CheckResult r = CheckBaseline(baseline, Scheme::k2, samples);
//   if (r.AnyOver()) ...             // the CLI's exit code 3
//   if (!r.unchecked.empty()) ...    // a budget no device could check: never a silent pass
#ifndef MEMFLEET_BASELINE_BASELINE_CHECK_H_
#define MEMFLEET_BASELINE_BASELINE_CHECK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "report/report.h"
#include "baseline/baseline_file.h"

namespace memfleet::baseline {

enum class Scheme { k1 = 1, k2 = 2 };
// 1 or 2; InvalidArgument otherwise.
absl::StatusOr<Scheme> SchemeFromInt(int scheme);

// Which figure a budget limits: the report's graphics_dma_kb, non_graphics_kb, or total_kb.
enum class Budget { kGraphicsDma, kNonGraphics, kTargetTotal };
const char* BudgetName(Budget b);        // "graphics_dma_kb" | "non_graphics_kb" | "target_total_kb"
const char* BudgetFigureName(Budget b);  // the report figure: "graphics_dma_kb" | "non_graphics_kb" | "total_kb"

// One budget the scheme assigns: to a process (process non-empty) or to a department as a whole.
struct Assignment {
  std::string department;
  std::string process;  // "" = the department as a whole (its processes' total_kb summed)
  Budget budget = Budget::kTargetTotal;
  int64_t budget_kb = 0;
  bool is_department() const { return process.empty(); }
};

// A process the scheme gives no budget, and why ("unmet SR process: no baseline yet (scheme 2)").
struct Unbudgeted {
  std::string department;
  std::string process;
  std::string reason;
};

struct Assignments {
  std::vector<Assignment> budgets;  // in file order
  std::vector<Unbudgeted> none;
};

// The table of section 6, row by row:
//   met department, either scheme: every process, its actual baseline, both budgets.
//   unmet department, scheme 1: met SR processes both budgets; unmet SR processes their target total;
//     other processes none (the table gives them none).
//   unmet department, scheme 2: the department its target total; met SR processes both budgets; unmet SR
//     processes none ("no baseline yet"); other processes only inside the department's total.
Assignments AssignBudgets(const Baseline& baseline, Scheme scheme);

// One device's stored report with the device facts the baseline's applies_to and the grouping need.
struct DeviceSample {
  std::string device_id;
  std::string model;
  std::string build;  // build fingerprint
  std::string capture_id;
  std::string captured_at;
  report::Report report;
};

// One assigned budget on the devices of one model and build.
struct CheckRow {
  std::string model;
  std::string build;
  Assignment item;
  uint32_t devices_checked = 0;  // devices where the figure is known (process present)
  uint32_t devices_over = 0;
  uint32_t devices_unknown = 0;  // process present but the figure null
  // Some device that could not check it reports the process in the dumpsys tier (docs/accounting.md
  // section 9), where only total_kb is known: the budget is not checkable there.
  bool dumpsys_tier_seen = false;
  int64_t worst_value_kb = 0;  // the largest value seen (valid when devices_checked > 0)
  int64_t worst_over_kb = 0;   // worst_value_kb - budget_kb (negative: headroom)
  std::string worst_device;
  std::string worst_capture_id;
  // Where the memory of a process over budget is on its worst device (docs/accounting.md section 8):
  // its App Summary, when that capture has it (full smaps); nullopt for a department.
  std::optional<report::AppSummary> worst_app_summary;
  bool over() const { return devices_over > 0; }
};

// An assigned budget that no device the baseline applies to could check: its process is in none of
// their reports (a typo, a short name for a full one, a process gone from the build), or its figure is
// null in every report that has it. A check with such budgets has not checked what the baseline asks.
struct Unchecked {
  Assignment item;
  std::string reason;  // "no process named \"systemui\" in the 5 reports checked; did you mean ..."
};

struct CheckResult {
  Scheme scheme = Scheme::k1;
  std::vector<CheckRow> rows;        // over-budget rows first (largest excess first), then the rest
  std::vector<Unchecked> unchecked;  // in assignment order
  std::vector<Unbudgeted> unbudgeted;
  uint32_t devices = 0;                 // samples the baseline applies to
  uint32_t devices_not_applicable = 0;  // samples whose model/build the baseline excludes
  bool AnyOver() const;
};

// Per device, a process's figure is the sum over every process of that name in the report (several
// instances of one binary count together); a department's is the sum of its processes' total_kb. A
// process absent from a report is not checked on that device; a null figure counts as unknown.
CheckResult CheckBaseline(const Baseline& baseline, Scheme scheme, const std::vector<DeviceSample>& samples);

// One line per process of the baseline whose name is not exactly among `report_names` (the processes
// of the stored reports), saying which name it resolves to (common/process_name_match.h) or the closest
// names: a baseline names processes as the reports do, and a budget on a name no report has is never
// checked. Empty when `report_names` is (nothing stored yet to compare with).
std::vector<std::string> UnmatchedProcessNames(const Baseline& baseline, const std::vector<std::string>& report_names);

// The figure (graphics_dma_kb, non_graphics_kb, total_kb, app_summary.native_heap_kb, ...: any name of
// report/process_figure.h) of every process named `name` summed; nullopt when none is present; `*unknown`
// set when one is present with the figure null.
std::optional<int64_t> ProcessFigure(const report::Report& report, const std::string& name, const std::string& figure,
                                     bool* unknown);

// Whether the report gives a process named `name` in the dumpsys tier (docs/accounting.md section 9): only
// its total_kb is known there, and its figures compare only with other reports of that tier.
bool OfDumpsysTier(const report::Report& report, const std::string& name);

}  // namespace memfleet::baseline

#endif  // MEMFLEET_BASELINE_BASELINE_CHECK_H_
