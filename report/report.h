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

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/figure_tier.h"

namespace memfleet::report {

using Kb = std::optional<int64_t>;

enum class Platform { kQcom, kMtk, kXring, kMali, kGeneric };

// The two tiers of figures (docs/accounting.md section 9): common/figure_tier.h.
using ::memfleet::kTierDumpsys;
using ::memfleet::kTierKernel;
const char* PlatformName(Platform p);

// Where a process's memory is (docs/accounting.md, "Heaps and the App Summary"): the heaps of
// `dumpsys meminfo <pid>`, in its order, then the two JIT code-cache keys, which sit inside dalvik_other.
inline constexpr const char* kHeapNames[] = {"native",
                                             "dalvik",
                                             "dalvik_other",
                                             "stack",
                                             "cursor",
                                             "ashmem",
                                             "gfx_dev",
                                             "other_dev",
                                             "so",
                                             "jar",
                                             "apk",
                                             "ttf",
                                             "dex",
                                             "oat",
                                             "art",
                                             "other_mmap",
                                             "unknown",
                                             "jit_zygote_code_cache",
                                             "jit_app_code_cache"};

// dumpsys' row label of a heap ("Native Heap", ".so mmap", "JIT app code cache"); the name itself when
// it is none of kHeapNames.
std::string HeapLabel(std::string_view heap);

struct HeapFigures {
  int64_t pss_kb = 0;
  int64_t swap_pss_kb = 0;
  int64_t private_clean_kb = 0;
  int64_t private_dirty_kb = 0;
  bool operator==(const HeapFigures& o) const {
    return pss_kb == o.pss_kb && swap_pss_kb == o.swap_pss_kb && private_clean_kb == o.private_clean_kb &&
           private_dirty_kb == o.private_dirty_kb;
  }
};
// By heap name (kHeapNames); only heaps with a non-zero figure.
using Heaps = std::map<std::string, HeapFigures>;

// dumpsys' App Summary, from the heaps, without the vendor's memtrack rows.
struct AppSummary {
  int64_t java_heap_kb = 0;
  int64_t native_heap_kb = 0;
  int64_t code_kb = 0;
  int64_t stack_kb = 0;
  int64_t graphics_kb = 0;
  int64_t private_other_kb = 0;
  int64_t system_kb = 0;
  int64_t total_pss_kb = 0;
  int64_t total_swap_pss_kb = 0;
  bool operator==(const AppSummary& o) const;
  // Field by field: two processes of one name, summed.
  AppSummary& operator+=(const AppSummary& o);
};

// The App Summary's fields in dumpsys' order: JSON name, dumpsys' row label, member. Every view (CLI,
// dashboard, trend, regressions, /metrics) walks this list.
struct AppSummaryField {
  const char* name;   // "native_heap_kb"
  const char* label;  // "Native Heap"
  int64_t AppSummary::*member;
};
inline constexpr AppSummaryField kAppSummaryFields[] = {
    {"java_heap_kb", "Java Heap", &AppSummary::java_heap_kb},
    {"native_heap_kb", "Native Heap", &AppSummary::native_heap_kb},
    {"code_kb", "Code", &AppSummary::code_kb},
    {"stack_kb", "Stack", &AppSummary::stack_kb},
    {"graphics_kb", "Graphics", &AppSummary::graphics_kb},
    {"private_other_kb", "Private Other", &AppSummary::private_other_kb},
    {"system_kb", "System", &AppSummary::system_kb},
    {"total_pss_kb", "TOTAL PSS", &AppSummary::total_pss_kb},
    {"total_swap_pss_kb", "TOTAL SWAP PSS", &AppSummary::total_swap_pss_kb},
};
// The first kAppSummaryParts fields are the parts that add up to total_pss_kb (java heap ... system).
inline constexpr size_t kAppSummaryParts = 7;

// The field called `name` ("native_heap_kb"), or nullptr.
const AppSummaryField* FindAppSummaryField(std::string_view name);

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
  // Where its memory is (docs/accounting.md, "Heaps and the App Summary"): null without full smaps.
  std::optional<Heaps> heaps;
  std::optional<AppSummary> app_summary;
  // dma_kb split by the buffers' exporter ("system", "qcom,system", "unknown"); null when dma_kb is.
  std::optional<std::map<std::string, int64_t>> dma_by_exporter_kb;
  // Where the figures come from (docs/accounting.md section 9): kTierKernel, the kernel's nodes by the
  // rules above, or kTierDumpsys, the phone's own dumpsys meminfo line when its smaps could not be read
  // (only total_kb and cached are known then, and total_kb includes the vendor's memtrack).
  std::string tier = kTierKernel;
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
  // kTierDumpsys when any process's figures come from dumpsys (processes_kb then mixes both tiers), else
  // kTierKernel.
  std::string tier = kTierKernel;
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
  Kb total_pss_kb;  // unadjusted Σ dumpsys TOTAL PSS
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
