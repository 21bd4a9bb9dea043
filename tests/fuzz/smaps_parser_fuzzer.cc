// libFuzzer target for ParseSmaps, ParseMaps and ParseSmapsRollup, and the heaps the summary folds.
// Besides "no crash, no UB", it checks properties the parsers must share on any input.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "accounting/heaps.h"
#include "accounting/legacy_dmabuf.h"
#include "accounting/smaps_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto smaps = memfleet::accounting::ParseSmaps(text);
  const auto maps = memfleet::accounting::ParseMaps(text);
  const auto rollup = memfleet::accounting::ParseSmapsRollup(text);

  if (smaps.ok()) {
    for (const memfleet::accounting::Vma& v : *smaps) {
      if (v.start > v.end) __builtin_trap();
      // Names and perms are views into the input.
      if (!v.name.empty() &&
          (v.name.data() < text.data() || v.name.data() + v.name.size() > text.data() + text.size())) {
        __builtin_trap();
      }
      if (v.perms.size() != 4) __builtin_trap();
    }
    // The rollup accepts what smaps accepts, except sums that overflow (InvalidArgument).
    if (!rollup.ok() && rollup.status().code() != absl::StatusCode::kInvalidArgument) {
      __builtin_trap();
    }
    if (rollup.ok() && rollup->has_pss && rollup->pss_kb == 0) {
      bool any_pss = false;
      for (const memfleet::accounting::Vma& v : *smaps) any_pss |= v.pss_kb != 0;
      if (any_pss) __builtin_trap();
    }
  } else if (rollup.ok()) {
    __builtin_trap();
  }
  // The legacy anon_inode:dmabuf mappings the summary keeps are those a full parse sees.
  const auto summary = memfleet::accounting::ParseSmapsSummary(text, memfleet::accounting::GpuDeviceNaming::kKgsl);
  if (summary.ok() != smaps.ok()) __builtin_trap();
  if (summary.ok() && memfleet::accounting::CountLegacyDmaBufMappings(summary->legacy_dmabuf_vmas).count !=
                          memfleet::accounting::CountLegacyDmaBufMappings(*smaps).count) {
    __builtin_trap();
  }
  // The heaps the summary folds as it goes are those of the full parse's mappings, in order, and every
  // mapping lands in exactly one heap: their Pss adds up to the file's.
  if (summary.ok()) {
    memfleet::accounting::HeapTally tally;
    for (const memfleet::accounting::Vma& v : *smaps) {
      tally.Add(v.start, v.end, v.name, v.pss_kb, v.swap_pss_kb, v.private_clean_kb, v.private_dirty_kb);
    }
    if (!(tally == summary->heaps)) __builtin_trap();
    const auto heaps = summary->heaps.Figures();
    if (heaps && !summary->overflowed) {
      uint64_t pss = 0;
      for (const auto& [name, h] : *heaps) {
        if (name != "jit_zygote_code_cache" && name != "jit_app_code_cache") pss += static_cast<uint64_t>(h.pss_kb);
      }
      if (pss != summary->pss_kb) __builtin_trap();
    }
  }
  // A text that is all VMA headers is a valid smaps with the same VMAs.
  if (maps.ok() && (!smaps.ok() || smaps->size() != maps->size())) __builtin_trap();
  return 0;
}
