// The byte counters of a KGSL process directory (gpumem_mapped, gpumem_unmapped, imported_mem), which
// gl_kb and the Qualcomm memtrack figures are made of (docs/accounting.md, gl_kb).
//
//   absl::StatusOr<uint64_t> b = ParseKgslBytes("3403776\n");
#ifndef MEMFLEET_ACCOUNTING_KGSL_BYTES_H_
#define MEMFLEET_ACCOUNTING_KGSL_BYTES_H_

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"

namespace memfleet::accounting {

// The leading unsigned decimal (vendor forks print "%lld,%lld\n"). KGSL prints these with %lld, so a
// counter that went below zero reads "-4096": OutOfRange saying so, distinct from the InvalidArgument of
// text that is not a number at all.
absl::StatusOr<uint64_t> ParseKgslBytes(std::string_view text);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_KGSL_BYTES_H_
