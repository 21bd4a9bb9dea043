// libFuzzer target for ParseFdinfo.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "accounting/fdinfo_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto fdinfo = memfleet::accounting::ParseFdinfo(text);
  if (fdinfo.ok()) {
    // A dma-buf is recognised by its exp_name: line, which the text must hold.
    if (fdinfo->is_dmabuf() && text.find("exp_name:") == std::string_view::npos) __builtin_trap();
  } else if (fdinfo.status().code() != absl::StatusCode::kInvalidArgument) {
    __builtin_trap();
  }
  return 0;
}
