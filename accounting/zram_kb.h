// dumpsys.zram_kb (docs/accounting.md, "ZRAM"): the physical memory zram devices use, as AOSP's
// ReadZramTotal sums it, and null — never a silent 0 — when swap is in use but no zram node was captured.
//
//   std::vector<ZramDeviceText> devs = {{.mm_stat = "4096 2048 1048576 0 0 0 0\n"}};
//   ZramFigure z = ZramUsedKb(devs, swap_used_kb);   // z.zram_kb == 1024
#ifndef MEMFLEET_ACCOUNTING_ZRAM_KB_H_
#define MEMFLEET_ACCOUNTING_ZRAM_KB_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accounting/model.h"

namespace memfleet::accounting {

// One sys/block/zram<n>: the text of its files, nullopt when absent or unreadable.
struct ZramDeviceText {
  std::string name;  // "zram0", for warnings
  std::optional<std::string_view> mm_stat;
  std::optional<std::string_view> mem_used_total;
};

struct ZramFigure {
  Kb zram_kb;
  std::string source;
  std::optional<std::string> warning;  // why zram_kb is null
};

// `devices` are zram0, zram1, ... up to the first number the capture lacks (AOSP stops there too).
// Each device gives the 3rd field of mm_stat (bytes), else mem_used_total; a device with neither, or a
// malformed one, makes the sum null. No device: 0 when `swap_used_kb` (SwapTotal - SwapFree) is 0, else
// (swap in use, or unknown) null with a warning.
ZramFigure ZramUsedKb(const std::vector<ZramDeviceText>& devices, std::optional<uint64_t> swap_used_kb);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_ZRAM_KB_H_
