// libFuzzer target: GraphicsLibraries::Parse on any bytes, then matching with the parsed list and
// the built-in one.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "accounting/graphics_libraries.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<memfleet::accounting::GraphicsLibraries> libs = memfleet::accounting::GraphicsLibraries::Parse(text);
  if (libs.ok()) {
    (void)libs->MatchesPath("/system/lib64/libgui.so");
    (void)libs->MatchesBaseName("libGLESv2_adreno.so");
  }
  (void)memfleet::accounting::GraphicsLibraries::Default().MatchesPath(text);
  (void)memfleet::accounting::GraphicsLibraries::Default().MatchesBaseName(text);
  return 0;
}
