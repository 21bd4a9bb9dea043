// Small text helpers the parsers share: ASCII whitespace trimming, and the printable snippet of a bad
// line for error messages (common/untrusted_text.h, the one form untrusted text takes in a message).
//
//   std::string_view v = StripWhitespace(" 42\n");          // "42"
//   absl::StrCat("line 3: \"", Snippet(line, 100), "\"");   // escaped, cut to 100 bytes
#ifndef MEMFLEET_ACCOUNTING_TEXT_UTIL_H_
#define MEMFLEET_ACCOUNTING_TEXT_UTIL_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/untrusted_text.h"

namespace memfleet::accounting {

// Debian 12's abseil keeps its own absl::string_view, distinct from std::string_view.
inline absl::string_view ToAbsl(std::string_view s) { return absl::string_view(s.data(), s.size()); }
inline std::string_view ToStd(absl::string_view s) { return std::string_view(s.data(), s.size()); }

inline bool IsAsciiSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

inline std::string_view StripLeadingWhitespace(std::string_view s) {
  while (!s.empty() && IsAsciiSpace(s.front())) s.remove_prefix(1);
  return s;
}

inline std::string_view StripWhitespace(std::string_view s) {
  s = StripLeadingWhitespace(s);
  while (!s.empty() && IsAsciiSpace(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_TEXT_UTIL_H_
