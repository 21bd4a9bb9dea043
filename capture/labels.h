// Labels: key=value pairs a lab attaches to captures ("run=1234", "suite=camera") so it can ask for the
// memory of one test run. They come from the agent's --label flags (in capture.json) and from a sweep's
// --label flags, and are held to one set of rules at every boundary (docs/labels.md):
//   key:   1 to 32 bytes of [a-z0-9_], starting with a letter
//   value: 1 to 128 bytes of printable ASCII (0x20-0x7e): no control character, no non-ASCII byte
//   count: at most kMaxLabels from one source (the agent's, a sweep's)
//
//   absl::StatusOr<Labels> labels = ParseLabelFlags({"run=1234", "suite=camera"});
//
// Pure functions; thread-safe.
#ifndef MEMFLEET_CAPTURE_LABELS_H_
#define MEMFLEET_CAPTURE_LABELS_H_

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace memfleet::capture {

// Key -> value, ordered by key: a key appears once.
using Labels = std::map<std::string, std::string>;

inline constexpr size_t kMaxLabels = 16;
inline constexpr size_t kMaxLabelKeyBytes = 32;
inline constexpr size_t kMaxLabelValueBytes = 128;

// InvalidArgument naming the label (quoted, bounded, control bytes shown as '?') and the rule it breaks.
absl::Status CheckLabel(std::string_view key, std::string_view value);

// CheckLabel for each, and at most kMaxLabels.
absl::Status CheckLabels(const Labels& labels);

// "key=value" (split at the first '='), checked. The value may hold '='; one that starts with '"' is read
// as LabelsText writes a quoted value (common/label_text.h), so what a view shows reads back.
absl::StatusOr<std::pair<std::string, std::string>> ParseLabel(std::string_view text);

// Repeated --label flags: each parsed, no key twice, at most kMaxLabels.
absl::StatusOr<Labels> ParseLabelFlags(const std::vector<std::string>& texts);

}  // namespace memfleet::capture

#endif  // MEMFLEET_CAPTURE_LABELS_H_
