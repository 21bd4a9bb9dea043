// device.processes_kb (docs/accounting.md section 3): the sum of total_kb over the processes that are
// not cached (oom_score_adj < 900: Android kills those first, so they are not memory the device needs).
// A process whose total is unknown is left out with one warning, so one unreadable process does not
// blank the device; a device-wide GPU node that is unusable makes it null, never an undercount.
#ifndef MEMFLEET_ACCOUNTING_PROCESSES_KB_H_
#define MEMFLEET_ACCOUNTING_PROCESSES_KB_H_

#include <map>
#include <optional>
#include <string>

#include "accounting/model.h"

namespace memfleet::accounting {

struct ProcessesFigure {
  Kb processes_kb;
  std::string source;
  std::optional<std::string> warning;  // how many processes were left out
};

ProcessesFigure ProcessesKb(const std::map<int, ProcessReport>& processes, bool device_wide_gpu_unknown);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_PROCESSES_KB_H_
