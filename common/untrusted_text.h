// Text from outside the process (a device, an agent, a user): the checks it passes and the form in which
// it appears in a message. The wire's capture limits, the server's request checks and the agent share
// these, so that a value one of them accepts or prints, the others treat alike.
//
//   if (!IsErrnoName(entry.errno_name())) ...;                      // "EACCES", "ERRNO_523"
//   absl::StrCat("device id ", QuotedSnippet(id), " is too long");  // "ph\x1bone"...: bounded, escaped
//
// Header-only; pure and thread-safe.
#ifndef MEMFLEET_COMMON_UNTRUSTED_TEXT_H_
#define MEMFLEET_COMMON_UNTRUSTED_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace memfleet {

// C0 controls and DEL: the bytes that would break a log line or move a terminal's cursor.
inline bool IsControlByte(char c) {
  const unsigned char u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f;
}

// True when `value` has min_bytes..max_bytes bytes and `allowed(c)` holds for each of them.
template <typename Allowed>
bool IsBoundedTextOf(std::string_view value, size_t min_bytes, size_t max_bytes, const Allowed& allowed) {
  if (value.size() < min_bytes || value.size() > max_bytes) return false;
  for (char c : value) {
    if (!allowed(c)) return false;
  }
  return true;
}

// True when no byte of `value` is a control byte.
inline bool HasNoControlBytes(std::string_view value) {
  return IsBoundedTextOf(value, 0, value.size(), [](char c) { return !IsControlByte(c); });
}

// The longest errno name a capture may carry ("ERRNO_<n>" for values without a name is far shorter).
inline constexpr size_t kMaxErrnoNameBytes = 32;

// The shape of an errno name: 'E', then [A-Z0-9_], 2..kMaxErrnoNameBytes bytes ("EACCES", "ERRNO_523").
inline bool IsErrnoName(std::string_view text) {
  return !text.empty() && text[0] == 'E' && IsBoundedTextOf(text, 2, kMaxErrnoNameBytes, [](char c) {
           return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
         });
}

// How much of an untrusted value a message shows by default.
inline constexpr size_t kSnippetBytes = 80;

// The one form untrusted text takes in an error message or a log line: its first max_bytes, with quotes,
// backslashes, control bytes and bytes outside printable ASCII escaped (\" \\ \n \xNN), then "..." when
// it was cut. Nothing in it can end a log line, move a terminal's cursor or close the quotes around it.
inline std::string Snippet(std::string_view text, size_t max_bytes = kSnippetBytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char c : text.substr(0, max_bytes)) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (u >= 0x20 && u < 0x7f) {
      out += c;
    } else {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    }
  }
  if (text.size() > max_bytes) out += "...";
  return out;
}

// Snippet in double quotes, "..." after the closing one when cut: "abc"...
inline std::string QuotedSnippet(std::string_view text, size_t max_bytes = kSnippetBytes) {
  std::string out = "\"";
  out += Snippet(text.substr(0, max_bytes), max_bytes);
  out += '"';
  if (text.size() > max_bytes) out += "...";
  return out;
}

}  // namespace memfleet

#endif  // MEMFLEET_COMMON_UNTRUSTED_TEXT_H_
