// --where terms of a device selector ("model=Pixel 8", "platform=qcom"), checked before they reach the
// server so a typo is a usage error with the valid keys, not an empty fleet.
//
//   absl::StatusOr<v1::DeviceSelector> s = ParseWhere({"model=SM-S918B", "platform=qcom"});
#ifndef MEMFLEET_CLI_DEVICE_SELECTOR_H_
#define MEMFLEET_CLI_DEVICE_SELECTOR_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "memfleet/v1/query_service.pb.h"

namespace memfleet::cli {

// Each term is KEY=VALUE with KEY one of model, platform, soc, device_id, build, label.NAME (captures
// carrying label NAME=VALUE from their sweep, exactly; docs/labels.md) or agentlabel.NAME (from their
// agent's header); all must match.
// Spaces around the key are dropped, the value is kept as written (a model name may hold spaces); a
// value ending in * matches as a prefix ("model=Pixel*").
// InvalidArgument: no '=', an unknown key, an empty value, a key given twice (terms are ANDed, so two
// values of one key would match nothing), or a platform other than qcom, mtk, xring, mali, generic.
absl::StatusOr<v1::DeviceSelector> ParseWhere(const std::vector<std::string>& terms);

// Repeated --label KEY=VALUE flags (capture/labels.h rules; no key twice, at most 16) into `out`.
// InvalidArgument naming the flag (`flag`) otherwise.
absl::Status AddLabelFlags(const std::vector<std::string>& flags, google::protobuf::RepeatedPtrField<v1::Label>* out,
                           std::string_view flag = "--label");

}  // namespace memfleet::cli

#endif  // MEMFLEET_CLI_DEVICE_SELECTOR_H_
