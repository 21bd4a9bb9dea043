// --where terms of a device selector ("model=Pixel 8", "platform=qcom") checked with the one selector
// grammar (selector/selector.h) before they reach the server, so a typo is a usage error with the valid
// keys, not an empty fleet; and the --label flags of sweep and report.
//
//   absl::StatusOr<v1::DeviceSelector> s = ParseWhere({"model=SM-S918B", "platform=qcom"});
#ifndef MEMFLEET_CLI_DEVICE_SELECTOR_H_
#define MEMFLEET_CLI_DEVICE_SELECTOR_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "capture/labels.h"
#include "memfleet/v1/query_service.pb.h"

namespace memfleet::cli {

// The terms as selector::Selector::Parse takes them, sent in their canonical form; InvalidArgument
// naming the term otherwise (selector/selector.h has the grammar).
absl::StatusOr<v1::DeviceSelector> ParseWhere(const std::vector<std::string>& terms);

// Repeated --label KEY=VALUE flags (capture/labels.h rules; no key twice, at most 16) into `out`.
// InvalidArgument naming the flag (`flag`) otherwise.
absl::Status AddLabelFlags(const std::vector<std::string>& flags, google::protobuf::RepeatedPtrField<v1::Label>* out,
                           std::string_view flag = "--label");

// A capture's labels as the server sent them (repeated Label, by key) back into key -> value, for
// report::CaptureMarks; a key sent twice keeps its first value.
capture::Labels LabelMapOf(const google::protobuf::RepeatedPtrField<v1::Label>& labels);

}  // namespace memfleet::cli

#endif  // MEMFLEET_CLI_DEVICE_SELECTOR_H_
