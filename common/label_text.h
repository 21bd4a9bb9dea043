// Labels as text (docs/labels.md, "Labels as text"): the one spelling every view shows a capture's labels
// in — `memfleet report` and `trend`, the dashboard, the server's and the agent's messages — and the
// reading back of a value so written, by the --label flags and the --where label terms. A label value may
// hold spaces and quotes, so a value with a space, or that starts with a quote, is written in double
// quotes with '"' and '\' escaped by a backslash; any other value is written as it is.
//
//   LabelsText({{"run", "1234"}, {"suite", "camera smoke"}})   // run=1234 suite="camera smoke"
//   LabelValueFromText("\"camera smoke\"")                     // "camera smoke"
//
// Header-only; pure and thread-safe.
#ifndef MEMFLEET_COMMON_LABEL_TEXT_H_
#define MEMFLEET_COMMON_LABEL_TEXT_H_

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace memfleet {

// The rule a quoted value that LabelValueFromText refuses breaks, for the message that refuses it.
inline constexpr char kQuotedLabelValueRule[] =
    "a value that starts with '\"' is quoted: it ends at its closing '\"', and a quote or backslash inside is "
    "escaped by a backslash";

// `value` as a label term writes it: quoted (and escaped) when it holds a space or starts with '"'.
inline std::string LabelValueText(std::string_view value) {
  if (value.find(' ') == std::string_view::npos && (value.empty() || value.front() != '"')) return std::string(value);
  std::string text = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') text += '\\';
    text += c;
  }
  text += '"';
  return text;
}

// "key=value" terms, one space apart, in key order; values as LabelValueText writes them.
inline std::string LabelsText(const std::map<std::string, std::string>& labels) {
  std::string text;
  for (const auto& [key, value] : labels) {
    if (!text.empty()) text += ' ';
    text += key;
    text += '=';
    text += LabelValueText(value);
  }
  return text;
}

// The value a term's text means: text that starts with '"' is a quoted value (LabelValueText's form), read
// back without its quotes and escapes; any other text is the value as written. Nullopt for a quoted value
// that does not end in its closing quote, or has a backslash before anything but '"' or '\'.
inline std::optional<std::string> LabelValueFromText(std::string_view text) {
  if (text.empty() || text.front() != '"') return std::string(text);
  std::string value;
  for (size_t i = 1; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      if (i + 1 != text.size()) return std::nullopt;  // text after the closing quote
      return value;
    }
    if (c == '\\') {
      if (i + 1 >= text.size() || (text[i + 1] != '"' && text[i + 1] != '\\')) return std::nullopt;
      c = text[++i];
    }
    value += c;
  }
  return std::nullopt;  // no closing quote
}

}  // namespace memfleet

#endif  // MEMFLEET_COMMON_LABEL_TEXT_H_
