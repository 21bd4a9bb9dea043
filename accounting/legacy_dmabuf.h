// dma_kb on legacy kernels (docs/accounting.md, "Legacy kernels"): before the 2019 dma-buf naming
// series (4.14, many 4.19) every dma-buf mapping is "anon_inode:dmabuf" with one shared anonymous
// inode, so a mapping cannot name its buffer. A process with such a mapping gets dma_kb null (counting
// it as 0 would be a plausible-looking undercount), with a warning giving their number and length.
//
//   LegacyDmaBufMappings m = CountLegacyDmaBufMappings(vmas);
//   if (m.count > 0) report.warnings.push_back(LegacyDmaBufWarning("proc/42/smaps", m));
#ifndef MEMFLEET_ACCOUNTING_LEGACY_DMABUF_H_
#define MEMFLEET_ACCOUNTING_LEGACY_DMABUF_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "accounting/dmabuf_name.h"
#include "accounting/smaps_parser.h"

namespace memfleet::accounting {

struct LegacyDmaBufMappings {
  size_t count = 0;
  uint64_t bytes = 0;  // Σ (end - start); saturates instead of wrapping
};

LegacyDmaBufMappings CountLegacyDmaBufMappings(const std::vector<Vma>& vmas);

// "<node>: 142 anon_inode:dmabuf mappings (10136 kB) ...: dma_kb null".
std::string LegacyDmaBufWarning(std::string_view node, const LegacyDmaBufMappings& mappings);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_LEGACY_DMABUF_H_
