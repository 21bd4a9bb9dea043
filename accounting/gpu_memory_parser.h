// Parses the Mali-family GPU memory nodes into pages per tgid: MediaTek /proc/mtk_mali/gpu_memory and
// XRing /proc/xgpu/gpu_memory (v1 and v2 layouts).
//
//   absl::StatusOr<GpuPages> g = ParseMtkGpuMemory(text);
//   uint64_t kb = g->pages_by_tgid[pid] * page_size / 1024;
//
// Formats: docs/node-formats.md sections 2.2 (MTK: "  kctx-0x%p %10u %10u" = pointer, used pages, tgid;
// several contexts per process) and 2.3 (XRing v1 "<tgid> kctx-0x.. <pages>", v2 "<tgid> <gl> <pss> <rss>").
#ifndef MEMFLEET_ACCOUNTING_GPU_MEMORY_PARSER_H_
#define MEMFLEET_ACCOUNTING_GPU_MEMORY_PARSER_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace memfleet::accounting {

struct GpuPages {
  std::string device_name;                // first line's first token ("mali0")
  uint64_t device_pages = 0;              // first line's second token
  std::map<int, uint64_t> pages_by_tgid;  // summed over every context line of the tgid
  std::string layout;                     // "mtk", "xring-v1", "xring-v2" ("xring": no process line)
  // False when the node's layout names no pid (Arm's stock kbase): pages_by_tgid is empty and no
  // process can be attributed, which is not the same as every process having 0.
  bool per_process = true;
};

// MediaTek. Unavailable for the literal "<INVALID>" (lock contended: the agent should retry);
// FailedPrecondition for "GPU mem_profile doesn't be enabled"; InvalidArgument (line number) for a kctx
// line that does not parse, a missing device line, or empty text.
absl::StatusOr<GpuPages> ParseMtkGpuMemory(std::string_view text);

// XRing. The layout is decided from the process lines, never the device line: v1 when their second
// column starts with "kctx-", v2 when they are four integers (GL pages = column 2). The first line is the
// device line; other lines that are neither device nor kctx/tgid lines are ignored, but a line that
// starts like a kctx/tgid line (leading integer) and does not parse makes the node unparsable
// (InvalidArgument). "<INVALID>" gives Unavailable. Lines of both layouts in one file: InvalidArgument.
absl::StatusOr<GpuPages> ParseXgpuGpuMemory(std::string_view text);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_GPU_MEMORY_PARSER_H_
