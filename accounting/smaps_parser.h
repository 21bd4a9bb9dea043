// Parses /proc/<pid>/smaps, /proc/<pid>/smaps_rollup and /proc/<pid>/maps.
//
//   absl::StatusOr<std::vector<Vma>> vmas = ParseSmaps(text);
//   for (const Vma& v : *vmas) if (StartsWith(v.name, "/dev/kgsl")) gfx += v.pss_kb;
//
// Pure functions. `Vma::name` and `Vma::perms` point into the input text: keep the text alive while
// the result is used. Format and AOSP rules: docs/node-formats.md section 8.
#ifndef MEMFLEET_ACCOUNTING_SMAPS_PARSER_H_
#define MEMFLEET_ACCOUNTING_SMAPS_PARSER_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "accounting/gfxdev_mapping.h"
#include "accounting/heaps.h"

namespace memfleet::accounting {

struct Vma {
  uint64_t start = 0;
  uint64_t end = 0;
  std::string_view perms;  // "rw-s"
  uint64_t offset = 0;
  std::string_view dev;  // "fd:05"
  uint64_t inode = 0;
  std::string_view name;  // pathname or "[anon:...]"; may contain spaces; empty for anonymous VMAs
  // smaps fields, kB; 0 when the line is absent (and always 0 from ParseMaps). Keys match exactly:
  // "Pss:" is not "Pss_Dirty:", "Swap:" is not "SwapPss:".
  uint64_t size_kb = 0;
  uint64_t rss_kb = 0;
  uint64_t pss_kb = 0;
  uint64_t shared_clean_kb = 0;
  uint64_t shared_dirty_kb = 0;
  uint64_t private_clean_kb = 0;
  uint64_t private_dirty_kb = 0;
  uint64_t swap_kb = 0;
  uint64_t swap_pss_kb = 0;
};

// A full smaps file: one Vma per header line. Unknown `Key:` field lines (VmFlags:, THPeligible:,
// Pss_Dirty: ...) are accepted and ignored. InvalidArgument (with the line number) for a header line
// that does not parse or a field before any header; DataLoss for a text cut in the middle of a line
// (a last line without a newline that is not a complete field or header line). Empty text: no VMAs.
absl::StatusOr<std::vector<Vma>> ParseSmaps(std::string_view text);

// A maps file: header lines only.
absl::StatusOr<std::vector<Vma>> ParseMaps(std::string_view text);

// What the engine needs of a full smaps, gathered in one pass without keeping a Vma per mapping:
// the Pss/SwapPss sums, the Pss of the GPU device mappings, the dma-buf mappings (few per process) and
// the heaps.
struct SmapsSummary {
  size_t vma_count = 0;
  bool overflowed = false;  // a sum did not fit 64 bits: the sums below are meaningless
  uint64_t pss_kb = 0;
  uint64_t swap_pss_kb = 0;
  uint64_t gpu_device_pss_kb = 0;  // Σ Pss of the GPU device's mappings (gfxdev_mapping.h)
  std::vector<Vma> dmabuf_vmas;    // mappings whose name starts with /dmabuf (dmabuf_name.h)
  // Legacy kernels' "anon_inode:dmabuf" mappings, which name no buffer (docs/accounting.md).
  std::vector<Vma> legacy_dmabuf_vmas;
  // Every mapping's Pss, SwapPss and private pages by its Android heap (heaps.h).
  HeapTally heaps;
};

// ParseSmaps and fold: the same acceptance and errors as ParseSmaps (a VMA's fields are its last
// `Key:` line of each kind). `gpu_naming` picks the GPU device's mappings (kNone: gpu_device_pss_kb 0).
absl::StatusOr<SmapsSummary> ParseSmapsSummary(std::string_view text, GpuDeviceNaming gpu_naming);

// ParseSmapsSummary without the fast path for the kernel's exact line shapes: every line goes through
// the generic, checked path. The result is the same for every text; this exists so that a fuzzer
// (tests/fuzz/smaps_summary_paths_fuzzer.cc) and tests can hold the fast path against it.
absl::StatusOr<SmapsSummary> ParseSmapsSummaryGenericPath(std::string_view text, GpuDeviceNaming gpu_naming);

struct SmapsRollup {
  bool has_pss = false;  // a "Pss:" line was present
  uint64_t rss_kb = 0;
  uint64_t pss_kb = 0;
  uint64_t private_clean_kb = 0;
  uint64_t private_dirty_kb = 0;
  uint64_t swap_pss_kb = 0;
};

// smaps_rollup (a "[rollup]" header and one set of fields), AOSP's SmapsOrRollupFromFile semantics:
// sums every Pss:/Rss:/Private_Clean:/Private_Dirty:/SwapPss: line, so it also totals a full smaps.
absl::StatusOr<SmapsRollup> ParseSmapsRollup(std::string_view text);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_SMAPS_PARSER_H_
