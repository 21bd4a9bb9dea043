// Report: what the engine makes of one capture — the whole-device and per-process breakdown of
// docs/accounting.md, the dumpsys-compatible view, warnings and the source of each figure.
//
//   Report r = Account(capture);
//   if (r.device.total_kb) std::cout << *r.device.total_kb;
//   std::string json = ReportToJson(r);   // report_json.h
//
// A figure that could not be computed is std::nullopt (JSON null), never a silent 0; the reason is in
// `warnings` and in `sources`. Plain value type.
#ifndef MEMFLEET_REPORT_REPORT_H_
#define MEMFLEET_REPORT_REPORT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace memfleet::report {

using Kb = std::optional<int64_t>;

enum class Platform { kQcom, kMtk, kXring, kMali, kGeneric };
const char* PlatformName(Platform p);

struct ProcessReport {
  int pid = 0;
  std::string name;
  std::optional<int> oom_score_adj;
  bool cached = false;
  Kb pss_kb;
  Kb swap_pss_kb;
  Kb gfxdev_kb;
  Kb gl_kb;
  Kb dma_kb;
  Kb native_graphics_kb;
  std::string native_graphics_source = "none";  // "none" | "heap_dump"
  Kb non_graphics_kb;
  Kb graphics_dma_kb;
  Kb total_kb;
  // dumpsys-compatible per-process view (vendor memtrack semantics), docs/accounting.md section 4.
  Kb gl_mtrack_kb;
  Kb egl_mtrack_kb;
  Kb dumpsys_total_pss_kb;  // Pss + SwapPss + EGL mtrack + GL mtrack
  // Android's own gpu_mem_total of the process (cmd/dumpsys_gpu_gpumem), for reconciliation only: it
  // includes imported DMA-BUF, so it overlaps dma_kb and never enters a total. Null when not listed.
  Kb gpu_mem_total_kb;
};

struct DeviceReport {
  Kb ddr_kb;
  bool ddr_estimated = false;
  Kb mem_total_kb;
  Kb gcma_kb;
  Kb static_reserved_kb;
  Kb kernel_cma_kb;
  Kb kernel_kb;
  Kb processes_kb;
  Kb total_kb;
  Kb gpu_mem_global_kb;  // Android's global gpu_mem_total, beside the gl_kb figures; reconciliation only
};

// What `dumpsys meminfo` would print in its summary, computed with AOSP's formulas from the same nodes.
struct DumpsysView {
  int android_version = 14;
  Kb total_ram_kb;
  Kb free_ram_kb;
  Kb cached_pss_kb;
  Kb cached_kernel_kb;
  Kb free_kb;
  Kb dmabuf_total_kb;
  Kb dmabuf_mapped_kb;
  Kb dmabuf_unmapped_kb;
  Kb gpu_private_kb;
  Kb kernel_cma_kb;  // Android 16 only
  Kb used_ram_kb;
  Kb used_pss_kb;
  Kb kernel_used_kb;
  Kb lost_ram_kb;
  Kb zram_kb;
  Kb total_pss_kb;       // unadjusted Σ dumpsys TOTAL PSS
  Kb total_swap_pss_kb;
  Kb memtrack_graphics_kb;
  Kb memtrack_gl_kb;
  // MemTotal == Free + Used + Lost + ZRAM - SwapPss (AOSP's own identity); nullopt when not computable.
  std::optional<bool> identity_holds;
  // The device's own text (cmd/dumpsys_meminfo), parsed, when the capture has it: label -> value, and
  // computed - device for each label both have.
  std::map<std::string, int64_t> device_text_kb;
  std::map<std::string, int64_t> difference_kb;
};

struct Report {
  Platform platform = Platform::kGeneric;
  std::string device_id;
  std::string captured_at;
  uint64_t page_size = 4096;
  DeviceReport device;
  std::map<int, ProcessReport> processes;  // by pid
  DumpsysView dumpsys;
  std::vector<std::string> warnings;
  // "device.kernel_kb" / "processes.<pid>.gl_kb" -> node path(s), "estimated", or "unavailable: why".
  std::map<std::string, std::string> sources;
};

}  // namespace memfleet::report

#endif  // MEMFLEET_REPORT_REPORT_H_
