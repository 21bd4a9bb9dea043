#include "server/fleet/selected_devices.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace memfleet::server {

selector::DeviceFacts FactsOf(const storage::DeviceRecord& device) {
  return {device.model, device.platform,  device.soc, device.device_id, device.build_fingerprint,
          device.tier,  device.agent_tier};
}

absl::StatusOr<SelectedDevices> SelectedDevices::Of(storage::QueryStore& store, const selector::Selector& selector) {
  SelectedDevices picked(selector);
  if (!selector.has_label_terms()) return picked;
  absl::StatusOr<LatestLabelled> labelled = LatestLabelledPerDevice(store, LabelTermsOf(selector));
  if (!labelled.ok()) {
    return absl::UnavailableError(absl::StrCat("cannot read the labelled captures: ", labelled.status().message()));
  }
  picked.labelled_ = *std::move(labelled);
  return picked;
}

bool SelectedDevices::Contains(const storage::DeviceRecord& device) const {
  if (!selector_.MatchesDevice(FactsOf(device))) return false;
  return !selector_.has_label_terms() || labelled_.count(device.device_id) != 0;
}

}  // namespace memfleet::server
