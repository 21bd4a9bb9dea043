// libFuzzer target: ParseMtkGpuMemory and ParseXgpuGpuMemory on any bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "accounting/gpu_memory_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)memfleet::accounting::ParseMtkGpuMemory(text);
  (void)memfleet::accounting::ParseXgpuGpuMemory(text);
  return 0;
}
