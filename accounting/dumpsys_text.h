// Parses the summary of the device's own `dumpsys meminfo` text (cmd/dumpsys_meminfo), so the report can
// put what the phone printed beside what the engine computes.
//
//   absl::StatusOr<DumpsysSummary> s = ParseDumpsysMeminfo(text);
//   if (s->used_ram_kb) ...
//
// Numbers are printed by stringifyKBSize ("%,9dK": "3,019,740K"); docs/node-formats.md section 10.6.
#ifndef MEMFLEET_ACCOUNTING_DUMPSYS_TEXT_H_
#define MEMFLEET_ACCOUNTING_DUMPSYS_TEXT_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/statusor.h"

namespace memfleet::accounting {

struct DumpsysSummary {
  std::optional<int64_t> total_ram_kb;           // "Total RAM: X"
  std::optional<int64_t> free_ram_kb;            // "Free RAM: X (A cached pss + B cached kernel + C free)"
  std::optional<int64_t> free_cached_pss_kb;     // A
  std::optional<int64_t> free_cached_kernel_kb;  // B
  std::optional<int64_t> free_free_kb;           // C
  std::optional<int64_t> free_cached_ion_kb;     // "+ N cached ion +" of some OEM builds
  std::optional<int64_t> dmabuf_total_kb;        // "DMA-BUF: X (A mapped + B unmapped)"
  std::optional<int64_t> dmabuf_mapped_kb;
  std::optional<int64_t> dmabuf_unmapped_kb;
  std::optional<int64_t> ion_total_kb;  // "ION: X (A mapped + B unmapped + C pools)", Android 11-era
  std::optional<int64_t> ion_mapped_kb;
  std::optional<int64_t> ion_unmapped_kb;
  std::optional<int64_t> ion_pools_kb;
  std::optional<int64_t> gpu_total_kb;  // "GPU: X (A dmabuf + B private)"
  std::optional<int64_t> gpu_private_kb;
  std::optional<int64_t> kernel_cma_kb;  // "Kernel CMA: X" (Android 16)
  std::optional<int64_t> used_ram_kb;    // "Used RAM: X (A used pss + B kernel)"
  std::optional<int64_t> used_pss_kb;
  std::optional<int64_t> used_kernel_kb;
  std::optional<int64_t> lost_ram_kb;       // "Lost RAM: X"
  std::optional<int64_t> zram_physical_kb;  // "ZRAM: X physical used for A in swap (B total swap)"
  std::optional<int64_t> zram_swap_used_kb;
  std::optional<int64_t> zram_swap_total_kb;
};

// Lines that are not summary lines (the per-process tables) are skipped. InvalidArgument when no summary
// line is found (not a `dumpsys meminfo` text, or the per-app form) or a summary line's number does not
// parse. Negative numbers ("Lost RAM: -1,024K") are accepted.
absl::StatusOr<DumpsysSummary> ParseDumpsysMeminfo(std::string_view text);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_DUMPSYS_TEXT_H_
