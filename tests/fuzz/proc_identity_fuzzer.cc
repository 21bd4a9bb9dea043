// libFuzzer target for ParseCmdlineName, ParseStatusName and ParseOomScoreAdj.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "accounting/proc_identity.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string name = memfleet::accounting::ParseCmdlineName(text);
  if (name.size() > text.size() || name.find('\0') != std::string::npos) __builtin_trap();
  const auto status_name = memfleet::accounting::ParseStatusName(text);
  if (status_name.ok() && status_name->size() > text.size()) __builtin_trap();
  const auto adj = memfleet::accounting::ParseOomScoreAdj(text);
  if (adj.ok() && (*adj < -1000 || *adj > 1000)) __builtin_trap();
  return 0;
}
