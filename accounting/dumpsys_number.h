// One number of `dumpsys meminfo` text, as its summary and its per-process lines print them: the
// stringifyKBSize form "%,9dK" ("  3,019,740K", "-1,024K") or the older "%d kB" (Android 4.4).
//
//   absl::string_view rest = "  183,873K: system (pid 3703)";
//   int64_t kb = 0;
//   if (ConsumeDumpsysKb(&rest, &kb)) ...   // kb == 183873, rest == ": system (pid 3703)"
//
// Pure.
#ifndef MEMFLEET_ACCOUNTING_DUMPSYS_NUMBER_H_
#define MEMFLEET_ACCOUNTING_DUMPSYS_NUMBER_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace memfleet::accounting {

// The number at the front of *rest (leading spaces skipped; commas must group digits), advancing past
// it and its unit; false (and *rest untouched) when there is none or it does not fit 64 bits.
// `unit_optional`: a bare number is taken too (old builds print the breakdowns that way), when what
// follows is a space, '+' or ')'.
bool ConsumeDumpsysKb(absl::string_view* rest, int64_t* out, bool unit_optional = false);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_DUMPSYS_NUMBER_H_
