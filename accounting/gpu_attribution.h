// GPU driver memory per process (docs/accounting.md section 2, gl_kb) and the vendor memtrack values
// dumpsys would show (section 4), from KGSL sysfs, MediaTek mtk_mali + dma_heap/rss_pid, XRing xgpu, or
// the Mali kbase debugfs node of other Mali SoCs.
//
//   GpuAttribution g = AttributeGpu(capture, platform, page_size, pids, report);
//   Kb gl = g.by_pid[pid].gl_kb;
#ifndef MEMFLEET_ACCOUNTING_GPU_ATTRIBUTION_H_
#define MEMFLEET_ACCOUNTING_GPU_ATTRIBUTION_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "accounting/model.h"

namespace memfleet::accounting {

struct ProcessGpu {
  Kb gl_kb = 0;
  Kb gl_mtrack_kb = 0;
  Kb egl_mtrack_kb = 0;
  // Qualcomm only: floor(gpumem_mapped / 1024), what the /dev/kgsl mappings of smaps add up to; used for
  // gfxdev_kb when only smaps_rollup was captured. 0 without a KGSL directory.
  Kb kgsl_mapped_kb = 0;
  std::string gl_source;
};

struct GpuAttribution {
  std::map<int, ProcessGpu> by_pid;
  // A device-wide GPU node is unusable: gl_kb is null for every process, and the device totals that sum
  // them must be null too (never an undercount).
  bool device_wide_unknown = false;
  Kb gpu_private_kb;  // memtrack GL of pid 0 (Qualcomm: Σ gpumem_unmapped); null where not known
};

GpuAttribution AttributeGpu(const Capture& capture, Platform platform, uint64_t page_size, const std::vector<int>& pids,
                            Report& report);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_GPU_ATTRIBUTION_H_
