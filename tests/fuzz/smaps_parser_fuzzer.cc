// libFuzzer target for ParseSmaps, ParseMaps and ParseSmapsRollup. Besides "no crash, no UB", it
// checks properties the three parsers must share on any input.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
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
      if (!v.name.empty() && (v.name.data() < text.data() ||
                              v.name.data() + v.name.size() > text.data() + text.size())) {
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
  // A text that is all VMA headers is a valid smaps with the same VMAs.
  if (maps.ok() && (!smaps.ok() || smaps->size() != maps->size())) __builtin_trap();
  return 0;
}
