// The stored devices a `--where` selector (selector/selector.h) picks: its device terms on each device's
// record and, when it has label terms, a stored capture carrying them (docs/labels.md). `devices`,
// `sweep`, `fleet`, the baselines and the dashboard's fleet page all list devices through this, so one
// selector picks the same devices everywhere.
//
//   absl::StatusOr<SelectedDevices> picked = SelectedDevices::Of(store, selector);
//   if (picked->Contains(row.device)) ...
//
// A plain value; thread-safe for const use.
#ifndef MEMFLEET_SERVER_FLEET_SELECTED_DEVICES_H_
#define MEMFLEET_SERVER_FLEET_SELECTED_DEVICES_H_

#include "absl/status/statusor.h"
#include "selector/selector.h"
#include "server/fleet/capture_labels.h"
#include "storage/query_store.h"

namespace memfleet::server {

// A stored device record as the selector's device terms see it.
selector::DeviceFacts FactsOf(const storage::DeviceRecord& device);

class SelectedDevices {
 public:
  // Reads the labelled captures when the selector has label terms; Unavailable when the store fails.
  static absl::StatusOr<SelectedDevices> Of(storage::QueryStore& store, const selector::Selector& selector);

  bool Contains(const storage::DeviceRecord& device) const;
  // Device id -> its newest capture carrying every label term (empty without label terms).
  const LatestLabelled& labelled() const { return labelled_; }

 private:
  explicit SelectedDevices(const selector::Selector& selector) : selector_(selector) {}
  selector::Selector selector_;
  LatestLabelled labelled_;
};

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_FLEET_SELECTED_DEVICES_H_
