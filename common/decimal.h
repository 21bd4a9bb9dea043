// Checked decimal parsing: ASCII digits to uint64_t, refusing a value that does not fit instead of
// wrapping it. The parsers of kernel and device text read their unsigned numbers through these.
//
//   uint64_t kb = 0;
//   size_t digits = 0;
//   ReadDecimalPrefix("2048 kB", &kb, &digits);              // kOk, kb 2048, digits 4
//   int pid = 0;
//   ParseDecimal("1843", &pid);                              // the whole text: no sign, no blanks
//
// Header-only and inline: the smaps parser calls ReadDecimalPrefix on its hot path.
#ifndef MEMFLEET_COMMON_DECIMAL_H_
#define MEMFLEET_COMMON_DECIMAL_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <string_view>

#include "absl/base/attributes.h"
#include "absl/strings/string_view.h"

namespace memfleet {

enum class DecimalResult { kOk, kNoDigits, kOverflow };

// Reads the run of ASCII digits that starts `text`. kOk: *value and *digit_count are set (leading
// zeros count as digits). kNoDigits: `text` is empty or starts with something else (a sign, a blank).
// kOverflow: the run's value exceeds UINT64_MAX. The outputs are untouched unless kOk.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline DecimalResult ReadDecimalPrefix(std::string_view text, uint64_t* value,
                                                                    size_t* digit_count) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  constexpr size_t kDigitsThatAlwaysFit = std::numeric_limits<uint64_t>::digits10;  // 19
  uint64_t v = 0;
  size_t i = 0;
  // Kernel values are short: only a run longer than 19 digits pays for the overflow check.
  const size_t unchecked = text.size() < kDigitsThatAlwaysFit ? text.size() : kDigitsThatAlwaysFit;
  for (; i < unchecked; ++i) {
    const unsigned d = static_cast<unsigned>(static_cast<unsigned char>(text[i])) - unsigned{'0'};
    if (d > 9) break;  // also every byte below '0', which wrapped around
    v = v * 10 + d;
  }
  if (i == 0) return DecimalResult::kNoDigits;
  for (; i < text.size(); ++i) {
    const unsigned d = static_cast<unsigned>(static_cast<unsigned char>(text[i])) - unsigned{'0'};
    if (d > 9) break;
    if (v > (kMax - d) / 10) return DecimalResult::kOverflow;
    v = v * 10 + d;
  }
  *value = v;
  *digit_count = i;
  return DecimalResult::kOk;
}

// The whole text as one unsigned decimal that fits `Int` (uint64_t, or int for a pid): false for empty
// text, a sign, a blank or any other non-digit anywhere, or a value above Int's maximum; *out is
// untouched then.
template <typename Int>
bool ParseDecimal(std::string_view text, Int* out) {
  static_assert(std::is_integral_v<Int> && sizeof(Int) <= sizeof(uint64_t));
  uint64_t value = 0;
  size_t digits = 0;
  if (ReadDecimalPrefix(text, &value, &digits) != DecimalResult::kOk || digits != text.size() ||
      value > static_cast<uint64_t>(std::numeric_limits<Int>::max())) {
    return false;
  }
  *out = static_cast<Int>(value);
  return true;
}

// Debian 12's Abseil keeps its own absl::string_view, distinct from std::string_view; tokens from
// absl::StrSplit are those.
#if !defined(ABSL_USES_STD_STRING_VIEW)
template <typename Int>
bool ParseDecimal(absl::string_view text, Int* out) {
  return ParseDecimal(std::string_view(text.data(), text.size()), out);
}
template <typename Int>
bool ParseDecimal(const char* text, Int* out) {
  return ParseDecimal(std::string_view(text), out);
}
#endif

}  // namespace memfleet

#endif  // MEMFLEET_COMMON_DECIMAL_H_
