#include "accounting/legacy_dmabuf.h"

#include "absl/strings/str_cat.h"
#include "accounting/kb_math.h"
#include "accounting/text_util.h"

namespace memfleet::accounting {

LegacyDmaBufMappings CountLegacyDmaBufMappings(const std::vector<Vma>& vmas) {
  LegacyDmaBufMappings out;
  for (const Vma& v : vmas) {
    if (!IsLegacyDmaBufMappingName(v.name)) continue;
    ++out.count;
    if (v.end > v.start && !AddU64(out.bytes, v.end - v.start)) out.bytes = UINT64_MAX;
  }
  return out;
}

std::string LegacyDmaBufWarning(std::string_view node, const LegacyDmaBufMappings& mappings) {
  return absl::StrCat(ToAbsl(node), ": ", mappings.count, " ", kLegacyDmaBufMappingName, " mapping",
                      mappings.count == 1 ? "" : "s", " (", mappings.bytes / 1024,
                      " kB; a pre-4.19 kernel names no buffer, every dma-buf shares one inode): dma_kb null");
}

}  // namespace memfleet::accounting
