// libFuzzer target: ParseMaliGpuMemory (the four vendor layouts of the Mali kbase debugfs node) on any
// bytes. Besides "no crash, no UB": a layout without pids attributes nothing, and every pid is one.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "accounting/mali_gpu_memory.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto pages = memfleet::accounting::ParseMaliGpuMemory(text);
  if (!pages.ok()) return 0;
  if (!pages->per_process && !pages->pages_by_tgid.empty()) __builtin_trap();
  for (const auto& [pid, n] : pages->pages_by_tgid) {
    if (pid < 0) __builtin_trap();
  }
  return 0;
}
