#include "baseline/baseline_check.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/process_name_match.h"
#include "report/process_figure.h"

namespace memfleet::baseline {
namespace {

void AddBoth(const Department& d, const ProcessBaseline& p, Assignments& out) {
  // Validation guarantees both actual baselines for the processes this is called for.
  out.budgets.push_back({d.name, p.name, Budget::kGraphicsDma, p.graphics_dma_kb.value_or(0)});
  out.budgets.push_back({d.name, p.name, Budget::kNonGraphics, p.non_graphics_kb.value_or(0)});
}

}  // namespace

absl::StatusOr<Scheme> SchemeFromInt(int scheme) {
  if (scheme == 1) return Scheme::k1;
  if (scheme == 2) return Scheme::k2;
  return absl::InvalidArgumentError(absl::StrCat("scheme ", scheme, ": use 1 or 2 (docs/accounting.md section 6)"));
}

const char* BudgetName(Budget b) {
  switch (b) {
    case Budget::kGraphicsDma:
      return "graphics_dma_kb";
    case Budget::kNonGraphics:
      return "non_graphics_kb";
    case Budget::kTargetTotal:
      break;
  }
  return "target_total_kb";
}

const char* BudgetFigureName(Budget b) { return b == Budget::kTargetTotal ? "total_kb" : BudgetName(b); }

Assignments AssignBudgets(const Baseline& baseline, Scheme scheme) {
  Assignments out;
  for (const Department& d : baseline.departments) {
    if (d.status == MetStatus::kMet) {
      for (const ProcessBaseline& p : d.processes) AddBoth(d, p, out);
      continue;
    }
    if (scheme == Scheme::k2) {
      out.budgets.push_back({d.name, "", Budget::kTargetTotal, d.target_total_kb.value_or(0)});
    }
    for (const ProcessBaseline& p : d.processes) {
      if (p.sr && p.status == MetStatus::kMet) {
        AddBoth(d, p, out);
      } else if (p.sr) {
        if (scheme == Scheme::k1) {
          out.budgets.push_back({d.name, p.name, Budget::kTargetTotal, p.target_total_kb.value_or(0)});
        } else {
          out.none.push_back({d.name, p.name, "unmet SR process: no baseline yet (scheme 2)"});
        }
      } else {
        out.none.push_back(
            {d.name, p.name,
             scheme == Scheme::k1
                 ? "not an SR process of an unmet department: scheme 1 gives it no budget"
                 : "not an SR process of an unmet department: counted in the department's target total"});
      }
    }
  }
  return out;
}

std::optional<int64_t> ProcessFigure(const report::Report& report, const std::string& name, const std::string& figure,
                                     bool* unknown) {
  std::optional<int64_t> sum;
  bool null_seen = false;
  for (const auto& [pid, p] : report.processes) {
    if (p.name != name) continue;
    const report::Kb v = report::ProcessFigureValue(p, figure);
    if (!v) {
      null_seen = true;
      continue;
    }
    sum = sum.value_or(0) + *v;
  }
  if (unknown != nullptr) *unknown = null_seen;
  // One null instance makes the sum a plausible-looking undercount: unknown, never a figure.
  if (null_seen) return std::nullopt;
  return sum;
}

// Why `item` was checked on no device: no report has its process (with the name meant, when the
// resolver finds one), or every report that has it holds a null figure.
static std::string UncheckedReason(const Assignment& item, const std::vector<std::string>& names, size_t reports,
                                   bool unknown_seen, bool dumpsys_tier_seen) {
  if (unknown_seen && dumpsys_tier_seen) {
    return absl::StrCat(BudgetFigureName(item.budget), " is not checkable: the reports that have the process are of ",
                        "the dumpsys tier (an agent reading as shell), which gives only total_kb ",
                        "(docs/accounting.md section 9)");
  }
  if (unknown_seen)
    return absl::StrCat(BudgetFigureName(item.budget), " is unknown (null) in every report that has it");
  const std::string where = absl::StrCat("in the ", reports, reports == 1 ? " report" : " reports", " checked");
  if (item.is_department()) {
    return absl::StrCat("none of department ", item.department, "'s processes is ", where);
  }
  absl::StatusOr<std::string> meant = ResolveProcessName(item.process, names, where);
  if (meant.ok()) {
    return absl::StrCat("no process named \"", item.process, "\" ", where, "; the baseline names processes in full: \"",
                        *meant, "\"");
  }
  return std::string(meant.status().message());
}

std::vector<std::string> UnmatchedProcessNames(const Baseline& baseline, const std::vector<std::string>& report_names) {
  std::vector<std::string> out;
  if (report_names.empty()) return out;
  const std::set<std::string> known(report_names.begin(), report_names.end());
  for (const Department& d : baseline.departments) {
    for (const ProcessBaseline& p : d.processes) {
      if (known.count(p.name) > 0) continue;
      absl::StatusOr<std::string> meant = ResolveProcessName(p.name, report_names, "in the stored reports");
      out.push_back(meant.ok()
                        ? absl::StrCat("\"", p.name, "\" (", d.name, ") is no process name of the stored reports; ",
                                       "they name it \"", *meant, "\": use that name, or its budgets go unchecked")
                        : absl::StrCat("\"", p.name, "\" (", d.name, "): ", meant.status().message(),
                                       "; its budgets go unchecked until a report has it"));
    }
  }
  return out;
}

bool OfDumpsysTier(const report::Report& report, const std::string& name) {
  for (const auto& [pid, p] : report.processes) {
    if (p.name == name && p.tier == report::kTierDumpsys) return true;
  }
  return false;
}

bool CheckResult::AnyOver() const {
  return std::any_of(rows.begin(), rows.end(), [](const CheckRow& r) { return r.over(); });
}

CheckResult CheckBaseline(const Baseline& baseline, Scheme scheme, const std::vector<DeviceSample>& samples) {
  CheckResult result;
  result.scheme = scheme;
  Assignments assignments = AssignBudgets(baseline, scheme);
  result.unbudgeted = assignments.none;

  // (model, build) -> one row per assignment, in assignment order.
  std::map<std::pair<std::string, std::string>, std::vector<CheckRow>> groups;
  for (const DeviceSample& s : samples) {
    if (!baseline.AppliesTo(s.model, s.build)) {
      ++result.devices_not_applicable;
      continue;
    }
    ++result.devices;
    std::vector<CheckRow>& rows = groups[{s.model, s.build}];
    if (rows.empty()) {
      for (const Assignment& a : assignments.budgets) {
        CheckRow row;
        row.model = s.model;
        row.build = s.build;
        row.item = a;
        rows.push_back(std::move(row));
      }
    }
    for (CheckRow& row : rows) {
      std::optional<int64_t> value;
      bool unknown = false;
      if (row.item.is_department()) {
        const Department* dept = nullptr;
        for (const Department& d : baseline.departments) {
          if (d.name == row.item.department) dept = &d;
        }
        bool any = false;
        int64_t sum = 0;
        for (const ProcessBaseline& p : dept->processes) {
          bool u = false;
          std::optional<int64_t> v = ProcessFigure(s.report, p.name, "total_kb", &u);
          unknown = unknown || u;
          if (v) {
            any = true;
            sum += *v;
          }
        }
        if (any && !unknown) value = sum;
      } else {
        value = ProcessFigure(s.report, row.item.process, BudgetFigureName(row.item.budget), &unknown);
      }
      if (unknown) {
        ++row.devices_unknown;
        if (!row.item.is_department() && OfDumpsysTier(s.report, row.item.process)) row.dumpsys_tier_seen = true;
        continue;
      }
      if (!value) continue;
      ++row.devices_checked;
      if (*value > row.item.budget_kb) ++row.devices_over;
      // Ties go to the smaller device id so the result does not depend on the order of the samples.
      if (row.devices_checked == 1 || *value > row.worst_value_kb ||
          (*value == row.worst_value_kb && s.device_id < row.worst_device)) {
        row.worst_value_kb = *value;
        row.worst_over_kb = *value - row.item.budget_kb;
        row.worst_device = s.device_id;
        row.worst_capture_id = s.capture_id;
        row.worst_app_summary =
            row.item.is_department() ? std::nullopt : report::NamedAppSummary(s.report, row.item.process);
      }
    }
  }
  // Per assignment (in order): checked on some device, or only seen with a null figure.
  std::vector<bool> checked(assignments.budgets.size(), false), unknown(assignments.budgets.size(), false);
  std::vector<bool> dumpsys_tier(assignments.budgets.size(), false);
  for (auto& [key, rows] : groups) {
    for (size_t i = 0; i < rows.size(); ++i) {
      CheckRow& r = rows[i];
      checked[i] = checked[i] || r.devices_checked > 0;
      unknown[i] = unknown[i] || r.devices_unknown > 0;
      dumpsys_tier[i] = dumpsys_tier[i] || r.dumpsys_tier_seen;
      if (r.devices_checked > 0 || r.devices_unknown > 0) result.rows.push_back(std::move(r));
    }
  }
  std::vector<std::string> names;
  for (const DeviceSample& s : samples) {
    if (!baseline.AppliesTo(s.model, s.build)) continue;
    for (const auto& [pid, p] : s.report.processes) names.push_back(p.name);
  }
  for (size_t i = 0; i < assignments.budgets.size(); ++i) {
    if (checked[i]) continue;
    const Assignment& a = assignments.budgets[i];
    result.unchecked.push_back({a, UncheckedReason(a, names, result.devices, unknown[i], dumpsys_tier[i])});
  }
  std::stable_sort(result.rows.begin(), result.rows.end(), [](const CheckRow& a, const CheckRow& b) {
    if (a.over() != b.over()) return a.over();
    if (a.over()) return a.worst_over_kb > b.worst_over_kb;
    return false;
  });
  return result;
}

}  // namespace memfleet::baseline
