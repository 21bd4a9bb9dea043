// gpu_mem_total_kb and gpu_mem_global_kb (docs/accounting.md, "Android's own GPU counter"): what
// `dumpsys gpu --gpumem` (cmd/dumpsys_gpu_gpumem) prints of the kernel's gpu_mem_total counters, the
// GPU-addressable memory Android itself tracks on any vendor (Android 12+). For reconciliation only:
// it includes imported DMA-BUF, so it overlaps dma_kb and never enters a total.
//
//   absl::StatusOr<GpuMemSnapshot> s = ParseGpuMemSnapshot(text);
//   Kb global = s->global_bytes ? KbFromBytes(*s->global_bytes) : std::nullopt;
#ifndef MEMFLEET_ACCOUNTING_GPU_MEM_TOTAL_KB_H_
#define MEMFLEET_ACCOUNTING_GPU_MEM_TOTAL_KB_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>

#include "absl/status/statusor.h"

namespace memfleet::accounting {

inline constexpr char kDumpsysGpuMem[] = "cmd/dumpsys_gpu_gpumem";

struct GpuMemSnapshot {
  int gpu_count = 0;                           // "Memory snapshot for GPU <n>:" sections
  std::optional<uint64_t> global_bytes;        // Σ "Global total: <bytes>"; nullopt when a GPU says N/A
  std::map<int, uint64_t> total_bytes_by_pid;  // Σ over GPUs of "Proc <pid> total: <bytes>"
};

// Lines other than the section, Global and Proc lines are ignored (dumpsys' own banners).
// InvalidArgument (line number) for a Global or Proc line that does not parse, a sum that overflows, or
// a text without any "Memory snapshot for GPU" section (the service could not read the counters).
absl::StatusOr<GpuMemSnapshot> ParseGpuMemSnapshot(std::string_view text);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_GPU_MEM_TOTAL_KB_H_
