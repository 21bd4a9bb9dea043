#include "selector/selector.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "common/figure_tier.h"
#include "common/label_text.h"
#include "common/untrusted_text.h"

namespace memfleet::selector {
namespace {

constexpr std::string_view kLabelPrefix = "label.";            // a label the server gave (a sweep's)
constexpr std::string_view kAgentLabelPrefix = "agentlabel.";  // a label the agent wrote in its header
constexpr char kKeys[] = "model, platform, soc, device_id, build, tier, label.NAME, agentlabel.NAME";
constexpr std::string_view kPlatforms[] = {"qcom", "mtk", "xring", "mali", "generic"};
constexpr std::string_view kTiers[] = {kTierKernel, kTierDumpsys};

std::string_view FieldOf(const DeviceFacts& d, std::string_view key) {
  if (key == "model") return d.model;
  if (key == "platform") return d.platform;
  if (key == "soc") return d.soc;
  // A phone online with nothing stored yet is picked by what its agent said it reads.
  if (key == "tier") return d.tier.empty() ? d.agent_tier : d.tier;
  if (key == "device_id") return d.device_id;
  return d.build;
}

bool IsDeviceKey(std::string_view key) {
  return key == "model" || key == "platform" || key == "soc" || key == "device_id" || key == "build" || key == "tier";
}

absl::Status Refuse(std::string_view term, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("--where ", QuotedSnippet(term), ": ", why));
}

// The limits that hold before a term is even split: its size and its bytes (terms end up in the sweeps
// table and in log lines, where a newline would forge a line).
absl::Status CheckShape(std::string_view term) {
  if (term.size() > Selector::kMaxTermBytes) {
    return Refuse(term, absl::StrCat("longer than ", Selector::kMaxTermBytes, " bytes"));
  }
  if (!HasNoControlBytes(term)) return Refuse(term, "has a control character");
  return absl::OkStatus();
}

absl::Status CheckDeviceValue(std::string_view term, std::string_view key, std::string_view value) {
  if (value.empty()) {
    const char* example = key == "platform" ? "qcom" : key == "tier" ? kTierDumpsys : "VALUE";
    return Refuse(term, absl::StrCat("give a value, e.g. ", std::string(key), "=", example));
  }
  if (key == "platform" && value.back() != '*' &&
      std::find(std::begin(kPlatforms), std::end(kPlatforms), value) == std::end(kPlatforms)) {
    return Refuse(term, "platform is one of qcom, mtk, xring, mali, generic");
  }
  // Two names only, so no prefix: a tier is the one or the other.
  if (key == "tier" && std::find(std::begin(kTiers), std::end(kTiers), value) == std::end(kTiers)) {
    return Refuse(term, absl::StrCat("tier is one of ", kTierKernel, ", ", kTierDumpsys));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Selector> Selector::Parse(const std::vector<std::string>& terms) {
  if (terms.size() > kMaxTerms) {
    return absl::InvalidArgumentError(absl::StrCat("--where given ", terms.size(), " terms; at most ", kMaxTerms));
  }
  Selector s;
  std::set<std::string> seen;
  for (const std::string& term : terms) {
    if (absl::Status shape = CheckShape(term); !shape.ok()) return shape;
    const size_t eq = term.find('=');
    if (eq == std::string::npos) return Refuse(term, absl::StrCat("expected KEY=VALUE with KEY one of ", kKeys));
    const std::string key(absl::StripAsciiWhitespace(absl::string_view(term).substr(0, eq)));
    const std::string value = term.substr(eq + 1);
    if (!seen.insert(key).second) {
      return Refuse(term, absl::StrCat(key, "= is given twice; every term must match, so a device cannot have both ",
                                       "(ask once per value)"));
    }
    const bool sweep_label = key.compare(0, kLabelPrefix.size(), kLabelPrefix) == 0;
    if (sweep_label || key.compare(0, kAgentLabelPrefix.size(), kAgentLabelPrefix) == 0) {
      const std::string name = key.substr(sweep_label ? kLabelPrefix.size() : kAgentLabelPrefix.size());
      // A label value as `report` and `trend` print it (quoted when it holds a space) reads back.
      const std::optional<std::string> label_value = LabelValueFromText(value);
      if (!label_value) {
        return Refuse(term, absl::StrCat(kQuotedLabelValueRule, " (e.g. label.suite=\"camera smoke\")"));
      }
      if (absl::Status s_label = capture::CheckLabel(name, *label_value); !s_label.ok())
        return Refuse(term, std::string(s_label.message()));
      (sweep_label ? s.labels_ : s.agent_labels_).emplace(name, *label_value);
      s.text_.push_back(absl::StrCat(key, "=", LabelValueText(*label_value)));
      continue;
    }
    if (!IsDeviceKey(key))
      return Refuse(term, absl::StrCat("unknown key ", QuotedSnippet(key), "; use one of ", kKeys));
    // The same quoting as a label's, so that the selector's text (the sweeps list shows it) reads back:
    // `model="Pixel 8" soc=sm8450` is two terms where `model=Pixel 8 soc=sm8450` would not be.
    const std::optional<std::string> device_value = LabelValueFromText(value);
    if (!device_value) return Refuse(term, absl::StrCat(kQuotedLabelValueRule, " (e.g. model=\"Pixel 8\")"));
    if (absl::Status checked = CheckDeviceValue(term, key, *device_value); !checked.ok()) return checked;
    Term t{key, *device_value, device_value->back() == '*'};
    if (t.prefix) t.value.pop_back();
    s.device_terms_.push_back(std::move(t));
    s.text_.push_back(absl::StrCat(key, "=", LabelValueText(*device_value)));
  }
  return s;
}

bool Selector::MatchesDevice(const DeviceFacts& device) const {
  return std::all_of(device_terms_.begin(), device_terms_.end(), [&](const Term& t) {
    const std::string_view field = FieldOf(device, t.key);
    return t.prefix ? field.substr(0, t.value.size()) == t.value : field == t.value;
  });
}

namespace {

// Every term of `terms` is among `labels`, with its value.
bool AllAmong(const capture::Labels& terms, const capture::Labels& labels) {
  return std::all_of(terms.begin(), terms.end(), [&](const auto& term) {
    auto it = labels.find(term.first);
    return it != labels.end() && it->second == term.second;
  });
}

}  // namespace

bool Selector::MatchesLabels(const capture::Labels& sweep_labels, const capture::Labels& agent_labels) const {
  return AllAmong(labels_, sweep_labels) && AllAmong(agent_labels_, agent_labels);
}

std::string Selector::ToString() const { return absl::StrJoin(text_, " "); }

}  // namespace memfleet::selector
