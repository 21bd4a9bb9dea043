#include "server/fleet/capture_labels.h"

#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/label_text.h"
#include "storage/timestamp.h"

namespace memfleet::server {
namespace {

// A time in the store's form (storage/timestamp.h), so that comparing it with stored times as text
// compares them in time; "" stays "".
absl::StatusOr<std::string> StoredTimeForm(const std::string& time, const char* what) {
  if (time.empty()) return std::string();
  return storage::NormalizeTimestamp(time, what);
}

}  // namespace

absl::StatusOr<capture::Labels> LabelsFromProto(const google::protobuf::RepeatedPtrField<v1::Label>& labels) {
  if (static_cast<size_t>(labels.size()) > capture::kMaxLabels) {
    return absl::InvalidArgumentError(absl::StrCat(labels.size(), " labels; at most ", capture::kMaxLabels));
  }
  capture::Labels out;
  for (const v1::Label& label : labels) {
    if (absl::Status s = capture::CheckLabel(label.key(), label.value()); !s.ok()) return s;
    if (!out.emplace(label.key(), label.value()).second) {
      return absl::InvalidArgumentError(absl::StrCat("label key ", label.key(), " is given twice"));
    }
  }
  return out;
}

void LabelsToProto(const capture::Labels& labels, google::protobuf::RepeatedPtrField<v1::Label>* out) {
  for (const auto& [key, value] : labels) {
    v1::Label* label = out->Add();
    label->set_key(key);
    label->set_value(value);
  }
}

storage::LabelSet MergeLabels(const capture::Labels& agent, const capture::Labels& sweep) {
  storage::LabelSet merged;
  merged.sweep = sweep;
  for (const auto& [key, value] : agent) {
    if (sweep.count(key) == 0) merged.agent.emplace(key, value);
  }
  return merged;
}

storage::LabelSet LabelTermsOf(const selector::Selector& selector) {
  return storage::LabelSet{selector.labels(), selector.agent_labels()};
}

std::string DescribeLabels(const storage::LabelSet& labels) {
  std::string text = LabelsText(labels.sweep);
  if (!labels.agent.empty()) {
    absl::StrAppend(&text, text.empty() ? "" : ", ", labels.agent.size() == 1 ? "agent label " : "agent labels ",
                    LabelsText(labels.agent));
  }
  return text;
}

absl::StatusOr<LatestLabelled> LatestLabelledPerDevice(storage::QueryStore& store, const storage::LabelSet& all_of) {
  absl::StatusOr<std::vector<storage::LabelledCapture>> captures = store.LabelledCaptures(all_of);
  if (!captures.ok()) return captures.status();
  LatestLabelled latest;
  // Newest first within each device: the first seen is the one.
  for (storage::LabelledCapture& c : *captures) latest.emplace(c.device_id, std::move(c));
  return latest;
}

absl::StatusOr<std::optional<storage::StoredReport>> LatestLabelledReport(storage::QueryStore& store,
                                                                          const std::string& device_id,
                                                                          const std::string& at,
                                                                          const storage::LabelSet& all_of) {
  absl::StatusOr<std::string> at_utc = StoredTimeForm(at, "at");
  if (!at_utc.ok()) return at_utc.status();
  absl::StatusOr<std::vector<storage::LabelledCapture>> captures = store.LabelledCaptures(all_of);
  if (!captures.ok()) return captures.status();
  for (const storage::LabelledCapture& c : *captures) {  // newest first per device
    if (c.device_id == device_id && (at_utc->empty() || c.captured_at <= *at_utc)) {
      return store.GetReportByCapture(c.capture_id);
    }
  }
  return std::optional<storage::StoredReport>();
}

absl::StatusOr<std::vector<storage::StoredReport>> LabelledReports(storage::QueryStore& store,
                                                                   const storage::LabelSet& all_of,
                                                                   const std::string& sweep_id,
                                                                   const std::string& since, bool per_build) {
  absl::StatusOr<std::string> since_utc = StoredTimeForm(since, "since");
  if (!since_utc.ok()) return since_utc.status();
  absl::StatusOr<std::vector<storage::LabelledCapture>> captures = store.LabelledCaptures(all_of);
  if (!captures.ok()) return captures.status();
  std::set<std::pair<std::string, std::string>> taken;  // (device, build or "")
  std::vector<storage::StoredReport> reports;
  for (const storage::LabelledCapture& c : *captures) {  // newest first per device
    if (!sweep_id.empty() && c.sweep_id != sweep_id) continue;
    if (!taken.emplace(c.device_id, per_build ? c.build_fingerprint : std::string()).second) continue;
    if (c.captured_at < *since_utc) continue;
    absl::StatusOr<std::optional<storage::StoredReport>> report = store.GetReportByCapture(c.capture_id);
    if (!report.ok()) return report.status();
    if (!report->has_value()) continue;  // deleted since the listing
    if (per_build) (*report)->build_fingerprint = c.build_fingerprint;
    reports.push_back(**std::move(report));
  }
  return reports;
}

}  // namespace memfleet::server
