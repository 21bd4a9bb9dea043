// libFuzzer target: ParseGetprop and AndroidFactsOf on any bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "capture/getprop.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const memfleet::capture::GetpropValues props = memfleet::capture::ParseGetprop(text);
  if (props.values.size() > memfleet::capture::kMaxGetpropProperties) __builtin_trap();
  for (const auto& [name, value] : props.values) {
    if (name.empty() || name.size() > memfleet::capture::kMaxPropertyNameBytes) __builtin_trap();
    if (value.size() > memfleet::capture::kMaxPropertyValueBytes || value.find('\n') != std::string_view::npos) {
      __builtin_trap();
    }
  }
  const memfleet::capture::AndroidFacts facts = memfleet::capture::AndroidFactsOf(props);
  if (facts.model.size() > 256 || facts.build_fingerprint.size() > 256) __builtin_trap();
  if (facts.android_version && (*facts.android_version < 5 || *facts.android_version > 980)) __builtin_trap();
  return 0;
}
