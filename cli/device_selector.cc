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

constexpr std::string_view kLabelPrefix = "label.";

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
    const bool label = key.rfind(kLabelPrefix, 0) == 0;
    if (label) {
      if (absl::Status s = capture::CheckLabel(key.substr(kLabelPrefix.size()), value); !s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("--where \"", term, "\": ", s.message()));
      }
    } else if (Keys().count(key) == 0) {
      return absl::InvalidArgumentError(absl::StrCat("--where \"", term, "\": unknown key \"", key,
                                                     "\"; use one of model, platform, soc, device_id, build, label.NAME"));
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

absl::Status AddLabelFlags(const std::vector<std::string>& flags, google::protobuf::RepeatedPtrField<v1::Label>* out) {
  absl::StatusOr<capture::Labels> labels = capture::ParseLabelFlags(flags);
  if (!labels.ok()) return absl::InvalidArgumentError(absl::StrCat("--label: ", labels.status().message()));
  for (const auto& [key, value] : *labels) {
    v1::Label* label = out->Add();
    label->set_key(key);
    label->set_value(value);
  }
  return absl::OkStatus();
}

}  // namespace memfleet::cli
