#include "accounting/zram_kb.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "accounting/kb_math.h"
#include "accounting/sysfs_value.h"
#include "accounting/text_util.h"

namespace memfleet::accounting {
namespace {

// mm_stat: orig_data_size compr_data_size mem_used_total ... (bytes); the third field is what zram
// holds of RAM.
std::optional<uint64_t> MmStatUsedBytes(std::string_view text) {
  const std::vector<absl::string_view> fields =
      absl::StrSplit(ToAbsl(text), absl::ByAnyChar(" \t\n"), absl::SkipEmpty());
  uint64_t used = 0;
  if (fields.size() < 3 || !absl::SimpleAtoi(fields[2], &used)) return std::nullopt;
  return used;
}

}  // namespace

ZramFigure ZramUsedKb(const std::vector<ZramDeviceText>& devices, std::optional<uint64_t> swap_used_kb) {
  ZramFigure out;
  if (devices.empty()) {
    if (swap_used_kb && *swap_used_kb == 0) {
      out.zram_kb = 0;
      out.source = "no zram device and no swap in use: 0";
      return out;
    }
    out.source = "unavailable: no zram node captured";
    out.warning = swap_used_kb ? absl::StrCat("sys/block/zram0: no zram node captured while ", *swap_used_kb,
                                              " kB of swap is in use: zram_kb null")
                               : "sys/block/zram0: no zram node captured and swap use unknown (no SwapTotal/SwapFree): "
                                 "zram_kb null";
    return out;
  }
  uint64_t total_bytes = 0;
  for (const ZramDeviceText& dev : devices) {
    std::optional<uint64_t> used;
    std::string node;
    if (dev.mm_stat) {
      used = MmStatUsedBytes(*dev.mm_stat);
      node = "mm_stat";
    } else if (dev.mem_used_total) {
      absl::StatusOr<uint64_t> v = ParseSysfsUint(*dev.mem_used_total);
      if (v.ok()) used = *v;
      node = "mem_used_total";
    }
    if (node.empty()) {
      out.warning = absl::StrCat("sys/block/", dev.name, ": neither mm_stat nor mem_used_total readable: zram_kb null");
      out.source = "unavailable: a zram device unreadable";
      return out;
    }
    if (!used || !AddU64(total_bytes, *used)) {
      out.warning = absl::StrCat("sys/block/", dev.name, "/", node, ": malformed: zram_kb null");
      out.source = "unavailable: a zram device malformed";
      return out;
    }
  }
  out.zram_kb = KbFromBytes(total_bytes);
  out.source = absl::StrCat("sys/block/zram0..zram", devices.size() - 1,
                            ": mm_stat 3rd field (else mem_used_total), bytes / 1024");
  return out;
}

}  // namespace memfleet::accounting
