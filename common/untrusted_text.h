// Text from outside the process (a device, an agent, a user): the checks it passes and the form in which
// it appears in a message. The wire's capture limits, the server's request checks and the agent share
// these, so that a value one of them accepts or prints, the others treat alike.
//
//   if (!IsErrnoName(entry.errno_name())) ...;                      // "EACCES", "ERRNO_523"
//   absl::StrCat("device id ", QuotedSnippet(id), " is too long");  // "ph\x1bone"...: bounded, escaped
//   if (IsUnsafeCodePoint(cp)) out += VisibleEscape(cp);             // U+202E -> "\u202e"
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

// Length of the valid UTF-8 sequence at text[i] (its code point in *cp), or 0 when the byte there does
// not start one: a stray continuation byte, an overlong form, a surrogate, past U+10FFFF, or cut short.
inline size_t DecodeUtf8(std::string_view text, size_t i, char32_t* cp) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = b(i);
  size_t len = 0;
  char32_t value = 0;
  if (lead < 0x80) {
    *cp = lead;
    return 1;
  } else if (lead >= 0xC2 && lead <= 0xDF) {
    len = 2;
    value = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    len = 3;
    value = lead & 0x0F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    len = 4;
    value = lead & 0x07;
  } else {
    return 0;
  }
  if (i + len > text.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    value = (value << 6) | (b(i + k) & 0x3F);
  }
  static constexpr char32_t kMinOfLength[] = {0, 0, 0x80, 0x800, 0x10000};
  if (value < kMinOfLength[len] || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return 0;
  *cp = value;
  return len;
}

// Code points a terminal, a table or a chart legend acts on instead of showing: controls (C0, DEL, C1),
// the bidirectional formatting characters that make text display in an order other than the one it is
// stored in (U+202E turns "exe.gpj" into "jpg.exe"), and the line and paragraph separators.
inline bool IsUnsafeCodePoint(char32_t cp) {
  if (cp < 0x20 || cp == 0x7F) return true;
  if (cp >= 0x80 && cp <= 0x9F) return true;                      // C1: CSI, OSC, ...
  if (cp == 0x061C || cp == 0x200E || cp == 0x200F) return true;  // ALM, LRM, RLM
  if (cp >= 0x202A && cp <= 0x202E) return true;                  // LRE, RLE, PDF, LRO, RLO
  if (cp >= 0x2066 && cp <= 0x2069) return true;                  // LRI, RLI, FSI, PDI
  return cp == 0x2028 || cp == 0x2029;                            // line and paragraph separators
}

// How an unsafe code point is shown instead: "\x1b" below U+0080, else "\u202e" (lowercase hex).
inline std::string VisibleEscape(char32_t cp) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = cp < 0x80 ? "\\x" : "\\u";
  for (int shift = cp < 0x80 ? 4 : 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 0xF];
  return out;
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
