// device.kernel_kb (docs/accounting.md section 3): what the kernel itself holds, from /proc/meminfo —
// Shmem + SUnreclaim + VmallocUsed + PageTables + SecPageTables, plus KernelStack only without
// CONFIG_VMAP_STACK (with it the stacks are already in VmallocUsed), plus the kernel's CMA use.
#ifndef MEMFLEET_ACCOUNTING_KERNEL_KB_H_
#define MEMFLEET_ACCOUNTING_KERNEL_KB_H_

#include <optional>
#include <string>

#include "accounting/meminfo_parser.h"
#include "accounting/model.h"

namespace memfleet::accounting {

struct KernelFigure {
  Kb kernel_kb;
  std::string source;
  std::optional<std::string> warning;  // the meminfo lines that are missing
};

// `meminfo` null: the file was not usable (its own warning says why; none is added here).
KernelFigure KernelKb(const Meminfo* meminfo, bool vmap_stack, Kb kernel_cma_kb);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_KERNEL_KB_H_
