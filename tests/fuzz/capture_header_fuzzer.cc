// libFuzzer target: ParseCaptureHeader on any bytes (nlohmann::json exceptions must stay inside).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "capture/capture_header.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)memfleet::capture::ParseCaptureHeader(text);
  return 0;
}
