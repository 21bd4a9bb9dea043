// Parses the Arm Mali "kbase" debugfs node sys/kernel/debug/mali0/gpu_memory of the `mali` platform
// (Rockchip, Amlogic, Google Tensor, Exynos...) into pages per pid. Vendors print it four ways, and the
// layout is detected from the node itself (docs/accounting.md, "Mali layouts"):
//   mtk       "kctx-0x<addr> <pages> <tgid>"             (MediaTek-style; Realtek, MT6755)
//   amlogic   header "kctx pid used_pages", rows "<addr> <pid> <pages>"
//   rockchip  "kctx-0x<addr> <comm> <pid> <pages>"       (comm may hold spaces)
//   arm       "kctx-0x<addr> <pages>"                    (stock kbase: no pid, nobody attributable)
//
//   absl::StatusOr<GpuPages> g = ParseMaliGpuMemory(text);
//   if (!g->per_process) ...   // arm layout: gl_kb is unknown for every process
#ifndef MEMFLEET_ACCOUNTING_MALI_GPU_MEMORY_H_
#define MEMFLEET_ACCOUNTING_MALI_GPU_MEMORY_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "accounting/gpu_memory_parser.h"

namespace memfleet::accounting {

inline constexpr char kMaliDebugfsGpuMemory[] = "sys/kernel/debug/mali0/gpu_memory";
inline constexpr char kMaliDebugfsDir[] = "sys/kernel/debug/mali0";

// The first non-blank line is the device line (name, then its total pages as the last number). Other
// lines that are neither a context line nor the header are ignored (separators, vendor extras); a
// context line (a "kctx-" line, or after the Amlogic header a line starting with a hexadecimal address)
// that does not parse, or context lines of two layouts, make the node unparsable (InvalidArgument with
// the line number). "<INVALID>" gives Unavailable; empty text InvalidArgument.
absl::StatusOr<GpuPages> ParseMaliGpuMemory(std::string_view text);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_MALI_GPU_MEMORY_H_
