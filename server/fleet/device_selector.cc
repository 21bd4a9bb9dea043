#include "server/fleet/device_selector.h"

#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/untrusted_text.h"

namespace memfleet::server {
namespace {

const std::string* Field(const storage::DeviceRecord& d, std::string_view key) {
  if (key == "model") return &d.model;
  if (key == "platform") return &d.platform;
  if (key == "soc") return &d.soc;
  if (key == "device_id") return &d.device_id;
  if (key == "build") return &d.build_fingerprint;
  return nullptr;
}

constexpr std::string_view kLabelPrefix = "label.";

// "label.KEY=VALUE" (eq: the index of its '='), checked as labels are (capture/labels.h).
absl::Status AddLabelTerm(const std::string& text, size_t eq, capture::Labels* labels) {
  const std::string key = text.substr(kLabelPrefix.size(), eq - kLabelPrefix.size());
  const std::string value = text.substr(eq + 1);
  if (absl::Status s = capture::CheckLabel(key, value); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("selector term ", QuotedSnippet(text), ": ", s.message()));
  }
  if (!labels->emplace(key, value).second) {
    return absl::InvalidArgumentError(
        absl::StrCat("selector term label.", key, "= is given twice; a capture has one value per label"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DeviceSelector> DeviceSelector::Parse(const std::vector<std::string>& terms) {
  if (terms.size() > kMaxTerms) {
    return absl::InvalidArgumentError(absl::StrCat("selector has ", terms.size(), " terms; at most ", kMaxTerms));
  }
  DeviceSelector s;
  storage::DeviceRecord probe;
  for (const std::string& text : terms) {
    if (text.size() > kMaxTermBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("selector term ", QuotedSnippet(text), " is longer than ", kMaxTermBytes, " bytes"));
    }
    // Terms end up in the sweeps table and in log lines: no control bytes (a newline would forge a line).
    for (char c : text) {
      unsigned char u = static_cast<unsigned char>(c);
      if (u < 0x20 || u == 0x7f) {
        return absl::InvalidArgumentError(absl::StrCat("selector term ", QuotedSnippet(text), " has a control character"));
      }
    }
    size_t eq = text.find('=');
    if (eq == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "selector term ", QuotedSnippet(text), " is not key=value (keys: model, platform, soc, device_id, build, label.KEY)"));
    }
    if (text.compare(0, kLabelPrefix.size(), kLabelPrefix) == 0) {
      if (absl::Status added = AddLabelTerm(text, eq, &s.labels_); !added.ok()) return added;
      s.text_.push_back(text);
      continue;
    }
    Term t;
    t.key = text.substr(0, eq);
    t.value = text.substr(eq + 1);
    if (Field(probe, t.key) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("selector term ", QuotedSnippet(text), ": unknown key ", QuotedSnippet(t.key),
                                                     " (keys: model, platform, soc, device_id, build, label.KEY)"));
    }
    if (!t.value.empty() && t.value.back() == '*') {
      t.prefix = true;
      t.value.pop_back();
    }
    if (t.value.empty() && !t.prefix) {
      return absl::InvalidArgumentError(absl::StrCat("selector term ", QuotedSnippet(text), " has no value"));
    }
    s.terms_.push_back(std::move(t));
    s.text_.push_back(text);
  }
  return s;
}

bool DeviceSelector::Matches(const storage::DeviceRecord& device) const {
  for (const Term& t : terms_) {
    const std::string* field = Field(device, t.key);
    if (field == nullptr) return false;
    if (t.prefix) {
      if (field->compare(0, t.value.size(), t.value) != 0) return false;
    } else if (*field != t.value) {
      return false;
    }
  }
  return true;
}

std::string DeviceSelector::ToString() const { return absl::StrJoin(text_, " "); }

}  // namespace memfleet::server
