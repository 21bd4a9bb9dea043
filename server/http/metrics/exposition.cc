#include "server/http/metrics/exposition.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/untrusted_text.h"

namespace memfleet::metrics {
namespace {

constexpr char kReplacementCharacter[] = "\xEF\xBF\xBD";  // U+FFFD

std::string EscapeHelp(std::string_view help) {
  std::string out;
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (size_t i = 0; i < value.size();) {
    char32_t cp = 0;
    const size_t length = DecodeUtf8(value, i, &cp);
    if (length == 0) {
      out += kReplacementCharacter;
      ++i;
      continue;
    }
    if (cp == '\\') {
      out += "\\\\";
    } else if (cp == '"') {
      out += "\\\"";
    } else if (cp == '\n') {
      out += "\\n";
    } else if (IsUnsafeCodePoint(cp)) {
      // Shown as the CLI's tables show it ("\u202e"), its backslash escaped for the format.
      out += '\\';
      out += VisibleEscape(cp);
    } else {
      out.append(value.substr(i, length));
    }
    i += length;
  }
  return out;
}

std::string FormatSampleValue(double value, int max_decimals) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  std::string text = absl::StrFormat("%.*f", max_decimals, value);
  if (text.find('.') != std::string::npos) {
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  if (text == "-0") text = "0";
  return text;
}

void ExpositionWriter::Family(std::string_view name, std::string_view type, std::string_view help) {
  const std::string escaped_help = EscapeHelp(help);
  for (std::string_view piece :
       {std::string_view("# HELP "), name, std::string_view(" "), std::string_view(escaped_help),
        std::string_view("\n# TYPE "), name, std::string_view(" "), type, std::string_view("\n")}) {
    text_.append(piece);
  }
}

void ExpositionWriter::Sample(std::string_view name, const Labels& labels, int64_t value) {
  SampleText(name, labels, absl::StrCat(value));
}

void ExpositionWriter::Sample(std::string_view name, const Labels& labels, double value) {
  SampleText(name, labels, FormatSampleValue(value));
}

void ExpositionWriter::SampleText(std::string_view name, const Labels& labels, std::string_view value) {
  text_.append(name);
  if (!labels.empty()) {
    text_ += '{';
    for (size_t i = 0; i < labels.size(); ++i) {
      if (i > 0) text_ += ',';
      text_.append(labels[i].first);
      text_ += "=\"";
      text_ += EscapeLabelValue(labels[i].second);
      text_ += '"';
    }
    text_ += '}';
  }
  text_ += ' ';
  text_.append(value);
  text_ += '\n';
}

}  // namespace memfleet::metrics
