// The dumpsys-compatible summary (docs/accounting.md section 4): Free/Used/Lost RAM computed with AOSP's
// own formulas (ActivityManagerService.dumpApplicationMemoryUsage + MemInfoReader), Android 12-15
// formulas by default, Android 16's deltas behind the version switch, never blended.
//
//   DumpsysInputs in = ...;                       // from the same nodes as the report
//   DumpsysView v = ComputeDumpsysSummary(in);    // v.used_ram_kb, v.lost_ram_kb, ...
//
// Reference: docs/node-formats.md sections 10.2-10.5 (its worked example is a test).
#ifndef MEMFLEET_ACCOUNTING_DUMPSYS_VIEW_H_
#define MEMFLEET_ACCOUNTING_DUMPSYS_VIEW_H_

#include "accounting/meminfo_parser.h"
#include "accounting/model.h"

namespace memfleet::accounting {

struct DumpsysInputs {
  int android_version = 14;
  const Meminfo* meminfo = nullptr;  // required; every output is null without it
  bool vmap_stack = true;            // CONFIG_VMAP_STACK: KernelStack is inside VmallocUsed
  // Σ over processes of dumpsys TOTAL PSS (Pss + SwapPss + EGL + GL mtrack), of their SwapPss, of the
  // TOTAL PSS of cached ones (oom_score_adj >= 900), and of memtrack graphics (EGL) and GL.
  Kb total_pss_kb;
  Kb total_swap_pss_kb;
  Kb cached_pss_kb;
  Kb memtrack_graphics_kb;
  Kb memtrack_gl_kb;
  // ION kernels (sys/kernel/ion/total_heaps_kb + total_pools_kb), else DMA-BUF sysfs total; null when
  // the device has neither (the branch is skipped, as dumpsys does).
  Kb ion_heaps_kb;
  Kb ion_pools_kb;
  Kb dmabuf_total_exported_kb;
  Kb dmabuf_mapped_kb;
  Kb gpu_private_kb;  // memtrack GL of pid 0 where known; null skips the GPU branch
  Kb kernel_cma_kb;   // Android 16 only
  Kb zram_kb;         // Σ /sys/block/zram*/mm_stat mem_used_total / 1024; 0 without zram
};

DumpsysView ComputeDumpsysSummary(const DumpsysInputs& in);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_DUMPSYS_VIEW_H_
