// The dumpsys tier (docs/accounting.md section 9): on a phone the agent reads as `shell`, other
// processes' smaps answer EACCES, so their figures come from what Android itself printed — the "Total PSS
// by process" lines of cmd/dumpsys_meminfo — instead of being null. Such a process has total_kb (dumpsys'
// TOTAL PSS, vendor memtrack included) and cached, every split figure null, and says tier "dumpsys".
//
//   DumpsysTierScope scope{.unreadable_pids = {3703}, .captured_pids = {3703, 9999}};
//   std::vector<ProcessReport> added = DumpsysTierProcesses(parsed, scope, report);
//
// Pure.
#ifndef MEMFLEET_ACCOUNTING_DUMPSYS_TIER_H_
#define MEMFLEET_ACCOUNTING_DUMPSYS_TIER_H_

#include <set>
#include <vector>

#include "accounting/dumpsys_processes.h"
#include "accounting/model.h"

namespace memfleet::accounting {

// Android kills processes at this OOM adjustment and above first: they are "cached".
inline constexpr int kCachedOomAdj = 900;

// Which lines of the text the dumpsys tier stands in for.
struct DumpsysTierScope {
  // Captured pids whose smaps and smaps_rollup were denied or failed (not gone, not malformed).
  std::set<int> unreadable_pids;
  // Every proc/<pid> the capture holds, whatever its smaps said (read, exited, a kernel thread).
  std::set<int> captured_pids;
  // The agent read as root: a pid its walk of /proc did not see was born after it, and the kernel tier
  // would have read it, so dumpsys does not stand in for it.
  bool walk_saw_every_process = false;
};

// One process of the dumpsys tier for every line of `dumpsys` whose pid is unreadable, or (unless the
// walk saw every process) not captured at all. Warnings (processes whose cached state the text does not
// give) and sources go into `report`.
std::vector<ProcessReport> DumpsysTierProcesses(const DumpsysProcesses& dumpsys, const DumpsysTierScope& scope,
                                                Report& report);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_DUMPSYS_TIER_H_
