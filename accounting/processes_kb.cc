#include "accounting/processes_kb.h"

#include "absl/strings/str_cat.h"
#include "accounting/kb_math.h"

namespace memfleet::accounting {

ProcessesFigure ProcessesKb(const std::map<int, ProcessReport>& processes, bool device_wide_gpu_unknown) {
  ProcessesFigure figure;
  if (device_wide_gpu_unknown) {
    figure.source = "unavailable: a device-wide GPU node is unusable";
    return figure;
  }
  Kb sum = 0;
  int unknown = 0;
  for (const auto& [pid, p] : processes) {
    if (p.cached) continue;
    if (!p.total_kb) {
      ++unknown;
      continue;
    }
    sum = AddKb(sum, p.total_kb);
  }
  figure.processes_kb = sum;
  figure.source = "sum of total_kb of processes with oom_score_adj < 900";
  if (unknown > 0) figure.warning = absl::StrCat(unknown, " processes with unknown total_kb left out of processes_kb");
  return figure;
}

}  // namespace memfleet::accounting
