// libFuzzer target: ParseGpuMemSnapshot (`dumpsys gpu --gpumem`) on any bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "accounting/gpu_mem_total_kb.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto s = memfleet::accounting::ParseGpuMemSnapshot(text);
  if (s.ok() && s->gpu_count <= 0) __builtin_trap();  // a snapshot without a GPU section is an error
  return 0;
}
