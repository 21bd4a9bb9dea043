// kernel_cma_kb when the capture holds no CMA region (docs/accounting.md, "What the capture cannot
// see"): 0 only when the kernel has no CMA; when /proc/meminfo says CmaTotal > 0, the regions exist but
// were not captured (no CMA sysfs, debugfs not mounted), and the figure is null, never a silent 0.
//
//   CmaWithoutRegions c = KernelCmaWithoutRegions(meminfo.Get("CmaTotal"));
#ifndef MEMFLEET_ACCOUNTING_KERNEL_CMA_KB_H_
#define MEMFLEET_ACCOUNTING_KERNEL_CMA_KB_H_

#include <cstdint>
#include <optional>
#include <string>

#include "accounting/model.h"

namespace memfleet::accounting {

struct CmaWithoutRegions {
  Kb kernel_cma_kb;
  std::string source;
  std::optional<std::string> warning;  // why kernel_cma_kb is null
};

// `cma_total_kb`: meminfo's CmaTotal; nullopt when the line is absent (kernels without CONFIG_CMA).
CmaWithoutRegions KernelCmaWithoutRegions(std::optional<uint64_t> cma_total_kb);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_KERNEL_CMA_KB_H_
