// libFuzzer target: ParseKernelConfigGz (gzip or plain text) and ParseKernelConfigText on any
// bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "accounting/kernel_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  // A small cap as well, so the refusal path is reached without inflating 64 MiB per input.
  (void)memfleet::accounting::ParseKernelConfigGz(bytes, 4096);
  (void)memfleet::accounting::ParseKernelConfigGz(bytes);
  absl::StatusOr<memfleet::accounting::KernelConfig> cfg = memfleet::accounting::ParseKernelConfigText(bytes);
  if (cfg.ok()) (void)cfg->IsEnabled("CONFIG_VMAP_STACK");
  return 0;
}
