#include "accounting/kernel_cma_kb.h"

#include "absl/strings/str_cat.h"

namespace memfleet::accounting {

CmaWithoutRegions KernelCmaWithoutRegions(std::optional<uint64_t> cma_total_kb) {
  CmaWithoutRegions out;
  if (!cma_total_kb || *cma_total_kb == 0) {
    out.kernel_cma_kb = 0;
    out.source = "no CMA region in sysfs or debugfs, and no CmaTotal in proc/meminfo: 0";
    return out;
  }
  out.source = "unavailable: proc/meminfo CmaTotal > 0 but no CMA region captured";
  out.warning = absl::StrCat("proc/meminfo: CmaTotal ", *cma_total_kb,
                             " kB, but the capture holds no CMA region (no sys/kernel/mm/cma, sys/kernel/debug/cma "
                             "not mounted): kernel_cma_kb null");
  return out;
}

}  // namespace memfleet::accounting
