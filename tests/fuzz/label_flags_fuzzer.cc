// libFuzzer target: the label rules (capture/labels.h) on any bytes, as --label flags (one per line)
// and as one KEY=VALUE; whatever the bytes, the result is an error or labels that pass CheckLabels, and
// labels as LabelsText prints them (common/label_text.h: quoted, escaped) read back to the same labels.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "capture/labels.h"
#include "common/label_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> flags;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = text.find('\n', start);
    flags.emplace_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  absl::StatusOr<memfleet::capture::Labels> labels = memfleet::capture::ParseLabelFlags(flags);
  if (labels.ok() && !memfleet::capture::CheckLabels(*labels).ok()) std::abort();
  if (labels.ok()) {
    std::vector<std::string> printed;
    for (const auto& [key, value] : *labels) printed.push_back(key + "=" + memfleet::LabelValueText(value));
    absl::StatusOr<memfleet::capture::Labels> back = memfleet::capture::ParseLabelFlags(printed);
    if (!back.ok() || *back != *labels) std::abort();
  }
  (void)memfleet::capture::ParseLabel(text);
  return 0;
}
