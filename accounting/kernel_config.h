// Parses the kernel configuration (/proc/config.gz, gzip; or its plain text) for the options the
// rules need, today CONFIG_VMAP_STACK.
//
//   absl::StatusOr<KernelConfig> cfg = ParseKernelConfigGz(bytes);
//   bool vmap = cfg->IsEnabled("CONFIG_VMAP_STACK");
//
// Pure function over bytes (zlib inflates in memory).
#ifndef MEMFLEET_ACCOUNTING_KERNEL_CONFIG_H_
#define MEMFLEET_ACCOUNTING_KERNEL_CONFIG_H_

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace memfleet::accounting {

struct KernelConfig {
  // "CONFIG_X" -> "y" / "m" / "\"string\"" / number. "# CONFIG_X is not set" lines are not stored.
  std::map<std::string, std::string, std::less<>> options;
  bool IsEnabled(std::string_view name) const {
    auto it = options.find(name);
    return it != options.end() && it->second == "y";
  }
};

// Plain-text .config lines.
absl::StatusOr<KernelConfig> ParseKernelConfigText(std::string_view text);
// gzip bytes (what /proc/config.gz holds); plain text is accepted too. DataLoss for a truncated or
// corrupt gzip stream; inflated output is capped (64 MiB) so a gzip bomb is refused, not expanded.
absl::StatusOr<KernelConfig> ParseKernelConfigGz(std::string_view bytes);
// The same with another cap on the inflated size (InvalidArgument past it); for tests.
absl::StatusOr<KernelConfig> ParseKernelConfigGz(std::string_view bytes, size_t max_inflated_bytes);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_KERNEL_CONFIG_H_
