#include "server/fleet/device_selector.h"

#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

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

// Printable form of a user's term for an error message (it may hold control bytes).
std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s.substr(0, 80)) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  if (s.size() > 80) out += "...";
  return out + "\"";
}

// The keys a term may have, for error messages.
constexpr char kKeys[] = " (keys: model, platform, soc, device_id, build, label.KEY, agentlabel.KEY)";

constexpr std::string_view kLabelPrefix = "label.";            // a label the server gave (a sweep's)
constexpr std::string_view kAgentLabelPrefix = "agentlabel.";  // a label the agent wrote in its header

// "PREFIX.KEY=VALUE" (eq: the index of its '='), checked as labels are (capture/labels.h).
absl::Status AddLabelTerm(const std::string& text, std::string_view prefix, size_t eq, capture::Labels* labels) {
  const std::string key = text.substr(prefix.size(), eq - prefix.size());
  const std::string value = text.substr(eq + 1);
  if (absl::Status s = capture::CheckLabel(key, value); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("selector term ", Quote(text), ": ", s.message()));
  }
  if (!labels->emplace(key, value).second) {
    return absl::InvalidArgumentError(absl::StrCat("selector term ", std::string(prefix), key,
                                                   "= is given twice; a capture has one value per label"));
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
          absl::StrCat("selector term ", Quote(text), " is longer than ", kMaxTermBytes, " bytes"));
    }
    // Terms end up in the sweeps table and in log lines: no control bytes (a newline would forge a line).
    for (char c : text) {
      unsigned char u = static_cast<unsigned char>(c);
      if (u < 0x20 || u == 0x7f) {
        return absl::InvalidArgumentError(absl::StrCat("selector term ", Quote(text), " has a control character"));
      }
    }
    size_t eq = text.find('=');
    if (eq == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("selector term ", Quote(text), " is not key=value", kKeys));
    }
    const bool sweep_label = text.compare(0, kLabelPrefix.size(), kLabelPrefix) == 0;
    if (sweep_label || text.compare(0, kAgentLabelPrefix.size(), kAgentLabelPrefix) == 0) {
      absl::Status added = sweep_label ? AddLabelTerm(text, kLabelPrefix, eq, &s.labels_.sweep)
                                       : AddLabelTerm(text, kAgentLabelPrefix, eq, &s.labels_.agent);
      if (!added.ok()) return added;
      s.text_.push_back(text);
      continue;
    }
    Term t;
    t.key = text.substr(0, eq);
    t.value = text.substr(eq + 1);
    if (Field(probe, t.key) == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("selector term ", Quote(text), ": unknown key ", Quote(t.key), kKeys));
    }
    if (!t.value.empty() && t.value.back() == '*') {
      t.prefix = true;
      t.value.pop_back();
    }
    if (t.value.empty() && !t.prefix) {
      return absl::InvalidArgumentError(absl::StrCat("selector term ", Quote(text), " has no value"));
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
