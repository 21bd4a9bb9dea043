// Labels at the server's edges (docs/labels.md): the wire's Label messages to checked capture::Labels and
// back, a capture's labels from its agent and its sweep kept apart by source, and the per-device "newest
// capture carrying these labels" that every label-scoped query starts from.
//
//   absl::StatusOr<capture::Labels> labels = LabelsFromProto(request->labels());   // InvalidArgument
//   absl::StatusOr<LatestLabelled> latest = LatestLabelledPerDevice(store, *labels);
//
// Pure functions over their arguments (the store's own threading rules apply); thread-safe.
#ifndef MEMFLEET_SERVER_FLEET_CAPTURE_LABELS_H_
#define MEMFLEET_SERVER_FLEET_CAPTURE_LABELS_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "capture/labels.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "memfleet/v1/query_service.pb.h"
#include "selector/selector.h"
#include "storage/query_store.h"

namespace memfleet::server {

// Each label checked (capture/labels.h), no key twice, at most capture::kMaxLabels; InvalidArgument
// naming the label otherwise.
absl::StatusOr<capture::Labels> LabelsFromProto(const google::protobuf::RepeatedPtrField<v1::Label>& labels);
void LabelsToProto(const capture::Labels& labels, google::protobuf::RepeatedPtrField<v1::Label>* out);

// A capture's labels by source: the sweep's, and the agent's on the keys the sweep does not give (a sweep's
// label wins on a key both give: the sweep names the run the capture was taken for, the agent only where
// the phone sits).
storage::LabelSet MergeLabels(const capture::Labels& agent, const capture::Labels& sweep);

// A selector's label terms as a store query: label.NAME as the sweep's, agentlabel.NAME as the agent's.
storage::LabelSet LabelTermsOf(const selector::Selector& selector);

// "run=1234, suite=camera" for the sweep's labels, then "agent label rack=7" for each of the agent's (error
// messages; labels are checked printable, so the text needs no escaping).
std::string DescribeLabels(const storage::LabelSet& labels);

// device id -> its newest capture carrying every label of `all_of`, each from its source (devices with
// none are absent).
using LatestLabelled = std::map<std::string, storage::LabelledCapture>;
absl::StatusOr<LatestLabelled> LatestLabelledPerDevice(storage::QueryStore& store, const storage::LabelSet& all_of);

// The device's newest report carrying every label of `all_of` (each from its source), at or before `at`
// (RFC 3339; "" = any time); nullopt when it has none.
absl::StatusOr<std::optional<storage::StoredReport>> LatestLabelledReport(storage::QueryStore& store,
                                                                          const std::string& device_id,
                                                                          const std::string& at,
                                                                          const storage::LabelSet& all_of);

// The stored reports of the captures carrying every label of `all_of`, as the baseline checks take them:
// each device's newest (`per_build`: each device's newest on each build, with build_fingerprint filled),
// among the captures of `sweep_id` when it is not "", kept when at or after `since` (RFC 3339; "" = any
// time). By device id.
absl::StatusOr<std::vector<storage::StoredReport>> LabelledReports(storage::QueryStore& store,
                                                                   const storage::LabelSet& all_of,
                                                                   const std::string& sweep_id,
                                                                   const std::string& since, bool per_build);

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_FLEET_CAPTURE_LABELS_H_
