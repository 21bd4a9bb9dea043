// What marks a stored capture in every view that lists captures (`memfleet report`, `memfleet trend`, the
// dashboard's device page): a change of tier in a history (report/tier_mix.h), the sweep it answered and
// its labels by where they came from (docs/labels.md). One wording, so the CLI and the dashboard say it
// alike:
//
//   for (const CaptureMark& m : CaptureMarks("sw-1", {{"run", "1234"}}, {{"rack", "7"}})) ...
//     // {kSweep, "sweep sw-1"}, {kLabels, "labels: run=1234"}, {kAgentLabels, "agent labels: rack=7"}
//   CaptureMarksText(...)   // "sweep sw-1 · labels: run=1234 · agent labels: rack=7"
//
// The text is not escaped: the caller escapes it for its medium (HTML, a terminal). Pure; thread-safe.
#ifndef MEMFLEET_REPORT_CAPTURE_MARKS_H_
#define MEMFLEET_REPORT_CAPTURE_MARKS_H_

#include <map>
#include <string>
#include <vector>

namespace memfleet::report {

// Key -> value, ordered by key, as a capture's labels are stored.
using MarkLabels = std::map<std::string, std::string>;

// Between two marks on one line.
inline constexpr char kCaptureMarkSeparator[] = " · ";

struct CaptureMark {
  enum class Kind { kTierChange, kSweep, kLabels, kAgentLabels };
  Kind kind;
  std::string text;
};

// The marks of a capture, in this order, each only when it has something to say: `tier_change` (a
// history's point whose tier changed, TierChanges), "sweep S" (a sweep's capture), "labels: k=v ..." (its
// sweep gave them; LabelsText of common/label_text.h), "agent labels: k=v ..." (its agent wrote them). None
// for a periodic capture without labels.
std::vector<CaptureMark> CaptureMarks(const std::string& sweep_id, const MarkLabels& labels,
                                      const MarkLabels& agent_labels, const std::string& tier_change = "");

// The marks joined by kCaptureMarkSeparator; "" when there are none.
std::string CaptureMarksText(const std::string& sweep_id, const MarkLabels& labels, const MarkLabels& agent_labels,
                             const std::string& tier_change = "");

// The tier change each point of a device's history marks, given each point's stored tier oldest first
// ("kernel", "dumpsys", "" unknown): TierChangeText where a point's tier is known and differs from the
// last known tier before it, "" elsewhere. A point of unknown tier (stored before tiers) marks nothing
// and does not end a run: kernel, unknown, dumpsys marks the third point, unknown, kernel none.
std::vector<std::string> TierChanges(const std::vector<std::string>& tiers);

}  // namespace memfleet::report

#endif  // MEMFLEET_REPORT_CAPTURE_MARKS_H_
