#include "accounting/kernel_kb.h"

#include "absl/strings/str_cat.h"
#include "accounting/kb_math.h"

namespace memfleet::accounting {
KernelFigure KernelKb(const Meminfo* meminfo, bool vmap_stack, Kb kernel_cma_kb) {
  Kb kernel = 0;
  std::string missing;
  auto add_required = [&](const char* key) {
    Kb v = MeminfoKb(meminfo, key);
    if (!v) absl::StrAppend(&missing, missing.empty() ? "" : ", ", key);
    kernel = AddKb(kernel, v);
  };
  for (const char* key : {"Shmem", "SUnreclaim", "VmallocUsed", "PageTables"}) add_required(key);
  // SecPageTables exists only since 6.0: absent is 0, not unknown.
  if (meminfo != nullptr && meminfo->Get("SecPageTables")) kernel = AddKb(kernel, MeminfoKb(meminfo, "SecPageTables"));
  if (!vmap_stack) add_required("KernelStack");
  KernelFigure figure;
  figure.kernel_kb = AddKb(kernel, kernel_cma_kb);
  if (meminfo != nullptr && !missing.empty()) {
    figure.warning = absl::StrCat("proc/meminfo: no ", missing, " line: kernel_kb null");
  }
  figure.source = absl::StrCat("proc/meminfo Shmem + SUnreclaim + VmallocUsed + PageTables + SecPageTables",
                               vmap_stack ? "" : " + KernelStack", " + kernel_cma_kb");
  return figure;
}

}  // namespace memfleet::accounting
