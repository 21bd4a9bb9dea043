// libFuzzer target: ParseNativeHeapDump, then GraphicsNativeBytes with the built-in library list.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "accounting/graphics_libraries.h"
#include "accounting/native_heap_dump.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<memfleet::accounting::NativeHeapDump> dump = memfleet::accounting::ParseNativeHeapDump(text);
  if (dump.ok()) {
    (void)memfleet::accounting::GraphicsNativeBytes(*dump, memfleet::accounting::GraphicsLibraries::Default());
  }
  return 0;
}
