#include "capture/labels.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/label_text.h"
#include "common/untrusted_text.h"

namespace memfleet::capture {
namespace {

bool IsKeyByte(char c, bool first) {
  if (c >= 'a' && c <= 'z') return true;
  return !first && ((c >= '0' && c <= '9') || c == '_');
}

}  // namespace

absl::Status CheckLabel(std::string_view key, std::string_view value) {
  if (key.empty() || key.size() > kMaxLabelKeyBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("label key ", QuotedSnippet(key, 64), " must be 1 to ", kMaxLabelKeyBytes, " bytes long"));
  }
  for (size_t i = 0; i < key.size(); ++i) {
    if (!IsKeyByte(key[i], i == 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("label key ", QuotedSnippet(key, 64),
                       " must be a lowercase letter followed by lowercase letters, digits or '_'"));
    }
  }
  if (value.empty() || value.size() > kMaxLabelValueBytes) {
    return absl::InvalidArgumentError(absl::StrCat("label ", std::string(key), "=", QuotedSnippet(value, 64),
                                                   ": the value must be 1 to ", kMaxLabelValueBytes, " bytes long"));
  }
  for (char c : value) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u > 0x7e) {
      return absl::InvalidArgumentError(
          absl::StrCat("label ", std::string(key), "=", QuotedSnippet(value, 64),
                       ": the value must be printable ASCII (no control or non-ASCII byte)"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckLabels(const Labels& labels) {
  if (labels.size() > kMaxLabels) {
    return absl::InvalidArgumentError(absl::StrCat(labels.size(), " labels; at most ", kMaxLabels));
  }
  for (const auto& [key, value] : labels) {
    if (absl::Status s = CheckLabel(key, value); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::pair<std::string, std::string>> ParseLabel(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("label ", QuotedSnippet(text, 64), " is not KEY=VALUE (e.g. run=1234)"));
  }
  std::string key(text.substr(0, eq));
  std::optional<std::string> value = LabelValueFromText(text.substr(eq + 1));
  if (!value) {
    return absl::InvalidArgumentError(
        absl::StrCat("label ", QuotedSnippet(text, 64), ": ", kQuotedLabelValueRule, " (e.g. suite=\"camera smoke\")"));
  }
  if (absl::Status s = CheckLabel(key, *value); !s.ok()) return s;
  return std::make_pair(std::move(key), *std::move(value));
}

absl::StatusOr<Labels> ParseLabelFlags(const std::vector<std::string>& texts) {
  if (texts.size() > kMaxLabels) {
    return absl::InvalidArgumentError(absl::StrCat(texts.size(), " labels; at most ", kMaxLabels));
  }
  Labels labels;
  for (const std::string& text : texts) {
    absl::StatusOr<std::pair<std::string, std::string>> label = ParseLabel(text);
    if (!label.ok()) return label.status();
    if (!labels.insert(*label).second) {
      return absl::InvalidArgumentError(absl::StrCat("label key ", label->first, " is given twice"));
    }
  }
  return labels;
}

}  // namespace memfleet::capture
