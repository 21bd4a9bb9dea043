#include "report/capture_marks.h"

#include <utility>

#include "absl/strings/str_join.h"
#include "common/figure_tier.h"
#include "common/label_text.h"
#include "report/tier_mix.h"

namespace memfleet::report {

std::vector<CaptureMark> CaptureMarks(const std::string& sweep_id, const MarkLabels& labels,
                                      const MarkLabels& agent_labels, const std::string& tier_change) {
  std::vector<CaptureMark> marks;
  if (!tier_change.empty()) marks.push_back({CaptureMark::Kind::kTierChange, tier_change});
  if (!sweep_id.empty()) marks.push_back({CaptureMark::Kind::kSweep, "sweep " + sweep_id});
  if (!labels.empty()) marks.push_back({CaptureMark::Kind::kLabels, "labels: " + LabelsText(labels)});
  if (!agent_labels.empty()) {
    marks.push_back({CaptureMark::Kind::kAgentLabels, "agent labels: " + LabelsText(agent_labels)});
  }
  return marks;
}

std::string CaptureMarksText(const std::string& sweep_id, const MarkLabels& labels, const MarkLabels& agent_labels,
                             const std::string& tier_change) {
  std::vector<std::string> texts;
  for (CaptureMark& mark : CaptureMarks(sweep_id, labels, agent_labels, tier_change)) {
    texts.push_back(std::move(mark.text));
  }
  return absl::StrJoin(texts, kCaptureMarkSeparator);
}

std::vector<std::string> TierChanges(const std::vector<std::string>& tiers) {
  std::vector<std::string> changes(tiers.size());
  std::string last_known;
  for (size_t i = 0; i < tiers.size(); ++i) {
    if (tiers[i] != kTierKernel && tiers[i] != kTierDumpsys) continue;
    if (!last_known.empty() && tiers[i] != last_known) changes[i] = TierChangeText(last_known, tiers[i]);
    last_known = tiers[i];
  }
  return changes;
}

}  // namespace memfleet::report
