#include "accounting/dumpsys_number.h"

#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/strip.h"

namespace memfleet::accounting {

bool ConsumeDumpsysKb(absl::string_view* rest, int64_t* out, bool unit_optional) {
  absl::string_view s = absl::StripLeadingAsciiWhitespace(*rest);
  const bool negative = absl::ConsumePrefix(&s, "-");
  if (s.empty() || !absl::ascii_isdigit(static_cast<unsigned char>(s.front()))) return false;
  // Accumulate as a negative number so INT64_MIN is representable without overflow.
  int64_t value = 0;
  bool last_was_digit = false;
  size_t n = 0;
  for (; n < s.size(); ++n) {
    const char c = s[n];
    if (c == ',') {
      if (!last_was_digit) return false;
      last_was_digit = false;
      continue;
    }
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) break;
    const int digit = c - '0';
    if (value < (std::numeric_limits<int64_t>::min() + digit) / 10) return false;  // overflow
    value = value * 10 - digit;
    last_was_digit = true;
  }
  if (!last_was_digit) return false;  // "1,"
  s.remove_prefix(n);
  if (!absl::ConsumePrefix(&s, "K")) {
    absl::string_view after_space = absl::StripLeadingAsciiWhitespace(s);
    if (absl::ConsumePrefix(&after_space, "kB")) {
      s = after_space;
    } else if (!unit_optional || (!s.empty() && !absl::ascii_isspace(static_cast<unsigned char>(s.front())) &&
                                  s.front() != '+' && s.front() != ')')) {
      return false;  // "272,48xK": the number runs into something else
    }
  }
  if (!negative) {
    if (value == std::numeric_limits<int64_t>::min()) return false;
    value = -value;
  }
  *out = value;
  *rest = s;
  return true;
}

}  // namespace memfleet::accounting
