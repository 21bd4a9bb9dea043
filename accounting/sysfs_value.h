// Parses single-value sysfs/procfs nodes: dma-buf sysfs size/exporter_name, CMA counters, KGSL
// per-process files, gcma flags.
//
//   absl::StatusOr<uint64_t> pages = ParseSysfsUint("1843712\n");
//   absl::StatusOr<uint64_t> mapped = ParseLeadingUint("3403776,0\n");   // KGSL vendor forks
#ifndef MEMFLEET_ACCOUNTING_SYSFS_VALUE_H_
#define MEMFLEET_ACCOUNTING_SYSFS_VALUE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace memfleet::accounting {

// Exactly one unsigned decimal, optionally surrounded by whitespace (the kernel's "%llu\n"; AOSP test
// files lack the newline). InvalidArgument for empty text, a sign, other characters, or overflow.
absl::StatusOr<uint64_t> ParseSysfsUint(std::string_view text);

// The first unsigned decimal of the text, ignoring what follows a non-digit (KGSL forks print
// "%lld,%lld\n"). InvalidArgument for empty text, a negative value, no leading digit, or overflow.
absl::StatusOr<uint64_t> ParseLeadingUint(std::string_view text);

// A sysfs string ("qcom,system\n") without surrounding whitespace.
std::string TrimSysfsString(std::string_view text);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_SYSFS_VALUE_H_
