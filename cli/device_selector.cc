#include "cli/device_selector.h"

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "capture/labels.h"
#include "selector/selector.h"

namespace memfleet::cli {

absl::StatusOr<v1::DeviceSelector> ParseWhere(const std::vector<std::string>& terms) {
  absl::StatusOr<selector::Selector> parsed = selector::Selector::Parse(terms);
  if (!parsed.ok()) return parsed.status();
  v1::DeviceSelector out;
  for (const std::string& term : parsed->terms()) out.add_where(term);
  return out;
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

capture::Labels LabelMapOf(const google::protobuf::RepeatedPtrField<v1::Label>& labels) {
  capture::Labels map;
  for (const v1::Label& label : labels) map.emplace(label.key(), label.value());
  return map;
}

}  // namespace memfleet::cli
