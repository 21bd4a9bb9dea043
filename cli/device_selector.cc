#include "cli/device_selector.h"

#include <set>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "capture/labels.h"

namespace memfleet::cli {
namespace {

const std::set<std::string>& Keys() {
  static const std::set<std::string> keys = {"model", "platform", "soc", "device_id", "build"};
  return keys;
}

constexpr std::string_view kLabelPrefix = "label.";            // a label the server gave (a sweep's)
constexpr std::string_view kAgentLabelPrefix = "agentlabel.";  // a label the agent wrote in its header

}  // namespace

absl::StatusOr<v1::DeviceSelector> ParseWhere(const std::vector<std::string>& terms) {
  v1::DeviceSelector selector;
  std::set<std::string> seen;
  for (const std::string& term : terms) {
    size_t eq = term.find('=');
    if (eq == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("--where \"", term, "\": expected KEY=VALUE with KEY one of model, platform, soc, device_id, build"));
    }
    std::string key(absl::StripAsciiWhitespace(term.substr(0, eq)));
    std::string value = term.substr(eq + 1);
    const bool agent_label = key.rfind(kAgentLabelPrefix, 0) == 0;
    const bool label = agent_label || key.rfind(kLabelPrefix, 0) == 0;
    if (label) {
      const size_t prefix_bytes = agent_label ? kAgentLabelPrefix.size() : kLabelPrefix.size();
      if (absl::Status s = capture::CheckLabel(key.substr(prefix_bytes), value); !s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("--where \"", term, "\": ", s.message()));
      }
    } else if (Keys().count(key) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--where \"", term, "\": unknown key \"", key,
                       "\"; use one of model, platform, soc, device_id, build, label.NAME, agentlabel.NAME"));
    }
    if (value.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("--where \"", term, "\": give a value, e.g. ", key, "=",
                                                     key == "platform" ? "qcom" : "VALUE"));
    }
    if (!seen.insert(key).second) {
      return absl::InvalidArgumentError(absl::StrCat("--where ", key, "= is given twice; every term must match, so a device ",
                                                     "cannot have both (run one sweep per value)"));
    }
    const bool prefix = !label && value.back() == '*';  // the server matches "model=Pixel*" as a prefix
    if (key == "platform" && !prefix && value != "qcom" && value != "mtk" && value != "xring" && value != "mali" &&
        value != "generic") {
      return absl::InvalidArgumentError(
          absl::StrCat("--where \"", term, "\": platform is one of qcom, mtk, xring, mali, generic"));
    }
    selector.add_where(key + "=" + value);
  }
  return selector;
}

absl::Status AddLabelFlags(const std::vector<std::string>& flags, google::protobuf::RepeatedPtrField<v1::Label>* out,
                           std::string_view flag) {
  absl::StatusOr<capture::Labels> labels = capture::ParseLabelFlags(flags);
  if (!labels.ok()) return absl::InvalidArgumentError(absl::StrCat(std::string(flag), ": ", labels.status().message()));
  for (const auto& [key, value] : *labels) {
    v1::Label* label = out->Add();
    label->set_key(key);
    label->set_value(value);
  }
  return absl::OkStatus();
}

}  // namespace memfleet::cli
