// libFuzzer target: ParseDumpsysMeminfo on any bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "accounting/dumpsys_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)memfleet::accounting::ParseDumpsysMeminfo(text);
  return 0;
}
