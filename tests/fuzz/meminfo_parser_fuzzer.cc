// libFuzzer target for ParseMeminfo.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "accounting/meminfo_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto meminfo = memfleet::accounting::ParseMeminfo(text);
  if (meminfo.ok()) {
    if (meminfo->values.empty()) __builtin_trap();  // an accepted text has at least one value
    for (const auto& [key, value] : meminfo->values) {
      if (key.empty() || meminfo->Get(key) != value) __builtin_trap();
    }
  } else if (meminfo.status().code() != absl::StatusCode::kInvalidArgument &&
             meminfo.status().code() != absl::StatusCode::kDataLoss) {
    __builtin_trap();
  }
  return 0;
}
