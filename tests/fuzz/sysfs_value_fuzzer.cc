// libFuzzer target for ParseSysfsUint, ParseLeadingUint, TrimSysfsString and ParseKgslBytes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "accounting/kgsl_bytes.h"
#include "accounting/sysfs_value.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto exact = memfleet::accounting::ParseSysfsUint(text);
  const auto leading = memfleet::accounting::ParseLeadingUint(text);
  // Whatever is exactly one number also starts with that number.
  if (exact.ok() && (!leading.ok() || *leading != *exact)) __builtin_trap();
  // KGSL's counters read like ParseLeadingUint, except that a negative one says so.
  const auto kgsl = memfleet::accounting::ParseKgslBytes(text);
  if (kgsl.ok() != leading.ok() || (kgsl.ok() && *kgsl != *leading)) __builtin_trap();
  const std::string trimmed = memfleet::accounting::TrimSysfsString(text);
  if (trimmed.size() > text.size()) __builtin_trap();
  if (memfleet::accounting::TrimSysfsString(trimmed) != trimmed) __builtin_trap();
  return 0;
}
