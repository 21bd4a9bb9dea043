#include "cli/device_selector.h"

#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace memfleet::cli {
namespace {

const std::set<std::string>& Keys() {
  static const std::set<std::string> keys = {"model", "platform", "soc", "device_id", "build"};
  return keys;
}

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
    if (Keys().count(key) == 0) {
      return absl::InvalidArgumentError(absl::StrCat("--where \"", term, "\": unknown key \"", key,
                                                     "\"; use one of model, platform, soc, device_id, build"));
    }
    if (value.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("--where \"", term, "\": give a value, e.g. ", key, "=",
                                                     key == "platform" ? "qcom" : "VALUE"));
    }
    if (!seen.insert(key).second) {
      return absl::InvalidArgumentError(absl::StrCat("--where ", key, "= is given twice; every term must match, so a device ",
                                                     "cannot have both (run one sweep per value)"));
    }
    const bool prefix = value.back() == '*';  // the server matches "model=Pixel*" as a prefix
    if (key == "platform" && !prefix && value != "qcom" && value != "mtk" && value != "xring" && value != "mali" &&
        value != "generic") {
      return absl::InvalidArgumentError(
          absl::StrCat("--where \"", term, "\": platform is one of qcom, mtk, xring, mali, generic"));
    }
    selector.add_where(key + "=" + value);
  }
  return selector;
}

}  // namespace memfleet::cli
