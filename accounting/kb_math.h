// Checked arithmetic on optional KiB figures: a null operand or an overflow gives null, so a corrupt
// node can never wrap into a plausible-looking number.
//
//   Kb total = AddKb(pss, swap_pss);          // nullopt if either is nullopt or the sum overflows
//   Kb kb = KbFromBytes(size_bytes);          // floor(bytes / 1024)
#ifndef MEMFLEET_ACCOUNTING_KB_MATH_H_
#define MEMFLEET_ACCOUNTING_KB_MATH_H_

#include <cstdint>
#include <limits>
#include <optional>

#include "accounting/model.h"

namespace memfleet::accounting {

inline Kb ToKb(uint64_t v) {
  if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  return static_cast<int64_t>(v);
}

inline Kb AddKb(Kb a, Kb b) {
  if (!a || !b) return std::nullopt;
  int64_t r;
  if (__builtin_add_overflow(*a, *b, &r)) return std::nullopt;
  return r;
}

inline Kb SubKb(Kb a, Kb b) {
  if (!a || !b) return std::nullopt;
  int64_t r;
  if (__builtin_sub_overflow(*a, *b, &r)) return std::nullopt;
  return r;
}

inline Kb KbFromBytes(uint64_t bytes) { return ToKb(bytes / 1024); }

// pages * page_size / 1024, exact for every page size >= 1024; nullopt on overflow.
inline Kb KbFromPages(uint64_t pages, uint64_t page_size) {
  uint64_t kb_per_page = page_size / 1024;
  uint64_t r;
  if (__builtin_mul_overflow(pages, kb_per_page, &r)) return std::nullopt;
  return ToKb(r);
}

// Checked unsigned accumulation; returns false on overflow.
inline bool AddU64(uint64_t& acc, uint64_t v) { return !__builtin_add_overflow(acc, v, &acc); }

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_KB_MATH_H_
