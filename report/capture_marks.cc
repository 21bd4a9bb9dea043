#include "report/capture_marks.h"

#include <utility>

#include "absl/strings/str_join.h"

namespace memfleet::report {

std::string LabelTerms(const MarkLabels& labels) { return absl::StrJoin(labels, " ", absl::PairFormatter("=")); }

std::vector<CaptureMark> CaptureMarks(const std::string& sweep_id, const MarkLabels& labels,
                                      const MarkLabels& agent_labels) {
  std::vector<CaptureMark> marks;
  if (!sweep_id.empty()) marks.push_back({CaptureMark::Kind::kSweep, "sweep " + sweep_id});
  if (!labels.empty()) marks.push_back({CaptureMark::Kind::kLabels, "labels: " + LabelTerms(labels)});
  if (!agent_labels.empty()) {
    marks.push_back({CaptureMark::Kind::kAgentLabels, "agent labels: " + LabelTerms(agent_labels)});
  }
  return marks;
}

std::string CaptureMarksText(const std::string& sweep_id, const MarkLabels& labels, const MarkLabels& agent_labels) {
  std::vector<std::string> texts;
  for (CaptureMark& mark : CaptureMarks(sweep_id, labels, agent_labels)) texts.push_back(std::move(mark.text));
  return absl::StrJoin(texts, kCaptureMarkSeparator);
}

}  // namespace memfleet::report
