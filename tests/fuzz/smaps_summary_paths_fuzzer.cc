// Differential libFuzzer target for ParseSmapsSummary, the smaps parser Account uses: its fast path
// for the kernel's exact line shapes and the generic, checked path (ParseSmapsSummaryGenericPath) must
// give the same summary, or the same error, for every input. Traps on the first difference.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "accounting/smaps_parser.h"

namespace {

using memfleet::accounting::SmapsSummary;
using memfleet::accounting::Vma;

bool SameVma(const Vma& a, const Vma& b) {
  return a.start == b.start && a.end == b.end && a.perms == b.perms && a.offset == b.offset && a.dev == b.dev &&
         a.inode == b.inode && a.name == b.name && a.size_kb == b.size_kb && a.rss_kb == b.rss_kb &&
         a.pss_kb == b.pss_kb && a.shared_clean_kb == b.shared_clean_kb && a.shared_dirty_kb == b.shared_dirty_kb &&
         a.private_clean_kb == b.private_clean_kb && a.private_dirty_kb == b.private_dirty_kb &&
         a.swap_kb == b.swap_kb && a.swap_pss_kb == b.swap_pss_kb;
}

bool SameVmas(const std::vector<Vma>& a, const std::vector<Vma>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!SameVma(a[i], b[i])) return false;
  }
  return true;
}

bool SameSummary(const SmapsSummary& a, const SmapsSummary& b) {
  return a.vma_count == b.vma_count && a.overflowed == b.overflowed && a.pss_kb == b.pss_kb &&
         a.swap_pss_kb == b.swap_pss_kb && a.gpu_device_pss_kb == b.gpu_device_pss_kb &&
         SameVmas(a.dmabuf_vmas, b.dmabuf_vmas) && SameVmas(a.legacy_dmabuf_vmas, b.legacy_dmabuf_vmas) &&
         a.heaps == b.heaps;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto fast = memfleet::accounting::ParseSmapsSummary(text, memfleet::accounting::GpuDeviceNaming::kKgsl);
  const auto generic =
      memfleet::accounting::ParseSmapsSummaryGenericPath(text, memfleet::accounting::GpuDeviceNaming::kKgsl);
  if (fast.ok() != generic.ok()) __builtin_trap();
  if (!fast.ok()) {
    // The same error: code and message (line number, reason, snippet).
    if (fast.status() != generic.status()) __builtin_trap();
    return 0;
  }
  if (!SameSummary(*fast, *generic)) __builtin_trap();
  return 0;
}
