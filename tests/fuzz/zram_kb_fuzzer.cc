// libFuzzer target: ZramUsedKb on any bytes, split at the first NUL into zram0's mm_stat and
// zram1's mem_used_total. A null figure always has its warning.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "accounting/zram_kb.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using memfleet::accounting::ZramDeviceText;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const size_t nul = text.find('\0');
  std::vector<ZramDeviceText> devices = {{"zram0", text.substr(0, nul), std::nullopt}};
  if (nul != std::string_view::npos) devices.push_back({"zram1", std::nullopt, text.substr(nul + 1)});
  const auto z = memfleet::accounting::ZramUsedKb(devices, size);
  if (!z.zram_kb && !z.warning) __builtin_trap();
  if (z.zram_kb && *z.zram_kb < 0) __builtin_trap();
  return 0;
}
