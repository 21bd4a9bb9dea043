// libFuzzer target for ParseBaselineFile: `memfleet baseline import` and the server parse files a lab
// writes by hand. Any bytes give a Baseline or an InvalidArgument, never an exception or a crash; an
// accepted baseline written back with BaselineToJson parses again to the same canonical text.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "baseline/baseline_check.h"
#include "baseline/baseline_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto baseline = memfleet::baseline::ParseBaselineFile(text);
  if (!baseline.ok()) {
    if (baseline.status().code() != absl::StatusCode::kInvalidArgument) __builtin_trap();
    return 0;
  }
  const std::string canonical = memfleet::baseline::BaselineToJson(*baseline);
  const auto again = memfleet::baseline::ParseBaselineFile(canonical);
  if (!again.ok() || memfleet::baseline::BaselineToJson(*again) != canonical) __builtin_trap();
  // Every accepted baseline can be assigned under both schemes and checked against no devices.
  for (auto scheme : {memfleet::baseline::Scheme::k1, memfleet::baseline::Scheme::k2}) {
    (void)memfleet::baseline::CheckBaseline(*baseline, scheme, {});
  }
  return 0;
}
