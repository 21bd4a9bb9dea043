// The processes of the device's own `dumpsys meminfo` text (cmd/dumpsys_meminfo): its "Total PSS by
// process" lines, and which pids its "Total PSS by OOM adjustment" table lists under Cached — what the
// dumpsys tier takes for a process whose smaps the agent could not read (docs/accounting.md section 9).
//
//   absl::StatusOr<DumpsysProcesses> d = ParseDumpsysProcesses(text);
//   for (const DumpsysProcessLine& p : d->processes) ...   // p.pid, p.name, p.total_pss_kb, p.oom_adj
//
// Line forms (docs/accounting.md section 9): "183,873K: system (pid 3703)", with " / activities" before
// the ")", with " state S oom A" after the pid (Android 13+), Android 4.4's "183873 kB: system (pid
// 3703)"; a trailing parenthesised note (a swap figure) is ignored. Other tables ("Total RSS by process",
// "Total PSS by category") are not read. Pure.
#ifndef MEMFLEET_ACCOUNTING_DUMPSYS_PROCESSES_H_
#define MEMFLEET_ACCOUNTING_DUMPSYS_PROCESSES_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace memfleet::accounting {

// A text holds at most this many process lines (a phone has hundreds): more is not a dumpsys text.
inline constexpr size_t kMaxDumpsysProcesses = 10000;

struct DumpsysProcessLine {
  int pid = 0;
  std::string name;
  int64_t total_pss_kb = 0;    // dumpsys' TOTAL PSS of the process: SwapPss and memtrack included
  std::optional<int> oom_adj;  // "oom A" (Android 13+); none for native processes or older releases
  int line_number = 0;         // in the text, for sources and warnings
};

struct DumpsysProcesses {
  bool has_process_section = false;           // a "Total PSS by process:" header
  bool has_oom_section = false;               // a "Total PSS by OOM adjustment:" header
  std::vector<DumpsysProcessLine> processes;  // in the text's order; one per pid (the first line wins)
  std::set<int> cached_pids;                  // listed under the OOM table's "Cached" group
  // Lines of the process section that are none of the forms: how many, and the first ten as
  // "line N: \"...\"" (escaped, cut).
  size_t skipped_line_count = 0;
  std::vector<std::string> skipped_lines;
};

// InvalidArgument only for a text with more than kMaxDumpsysProcesses process lines; a text without the
// sections gives an empty result (has_process_section false).
absl::StatusOr<DumpsysProcesses> ParseDumpsysProcesses(std::string_view text);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_DUMPSYS_PROCESSES_H_
