#include "accounting/dumpsys_tier.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "capture/node_path.h"

namespace memfleet::accounting {
namespace {

bool StandsInFor(const DumpsysTierScope& scope, int pid) {
  if (scope.unreadable_pids.count(pid) != 0) return true;
  return scope.captured_pids.count(pid) == 0 && !scope.walk_saw_every_process;
}

// cached: the line's own OOM adjustment (Android 13+), else the OOM table's Cached group, else not
// cached (false returned: the text does not say).
bool CachedFigure(const DumpsysProcesses& dumpsys, const DumpsysProcessLine& line, ProcessReport& p, Report& report) {
  const std::string key = absl::StrCat("processes.", line.pid, ".cached");
  if (line.oom_adj) {
    p.cached = *line.oom_adj >= kCachedOomAdj;
    report.sources[key] =
        absl::StrCat(capture::kDumpsysMeminfoNode, " line ", line.line_number, ": oom ", *line.oom_adj);
    return true;
  }
  if (dumpsys.cached_pids.count(line.pid) != 0) {
    p.cached = true;
    report.sources[key] =
        absl::StrCat(capture::kDumpsysMeminfoNode, ": listed under Cached in Total PSS by OOM adjustment");
    return true;
  }
  p.cached = false;
  report.sources[key] = absl::StrCat("not cached: ", capture::kDumpsysMeminfoNode, " gives no OOM adjustment for it");
  return false;
}

}  // namespace

std::vector<ProcessReport> DumpsysTierProcesses(const DumpsysProcesses& dumpsys, const DumpsysTierScope& scope,
                                                Report& report) {
  std::vector<ProcessReport> out;
  int cached_unknown = 0;
  for (const DumpsysProcessLine& line : dumpsys.processes) {
    if (!StandsInFor(scope, line.pid)) continue;
    ProcessReport p;
    p.pid = line.pid;
    p.name = line.name;
    p.tier = report::kTierDumpsys;
    p.total_kb = line.total_pss_kb;
    p.dumpsys_total_pss_kb = line.total_pss_kb;  // dumpsys' own view of the process is the line itself
    if (line.oom_adj) p.oom_score_adj = *line.oom_adj;
    if (!CachedFigure(dumpsys, line, p, report)) ++cached_unknown;
    const std::string key = absl::StrCat("processes.", line.pid, ".");
    report.sources[key + "total_kb"] =
        absl::StrCat(capture::kDumpsysMeminfoNode, " line ", line.line_number,
                     " (Total PSS by process): dumpsys TOTAL PSS, vendor memtrack included");
    report.sources[key + "name"] = absl::StrCat(capture::kDumpsysMeminfoNode, " line ", line.line_number);
    for (const char* figure : {"pss_kb", "swap_pss_kb", "gfxdev_kb", "gl_kb", "dma_kb", "native_graphics_kb",
                               "non_graphics_kb", "graphics_dma_kb", "heaps", "app_summary"}) {
      report.sources[key + figure] = "unavailable: smaps unreadable (dumpsys tier)";
    }
    out.push_back(std::move(p));
  }
  if (cached_unknown > 0) {
    report.warnings.push_back(absl::StrCat(capture::kDumpsysMeminfoNode, ": ", cached_unknown,
                                           " processes of the dumpsys tier have no OOM adjustment in the text ",
                                           "(native processes, or a table cut short): counted as not cached"));
  }
  return out;
}

}  // namespace memfleet::accounting
