#include "accounting/android_device.h"

#include "absl/strings/str_cat.h"
#include "capture/node_path.h"

namespace memfleet::accounting {

AndroidEvidence AndroidEvidenceOf(const CaptureHeader& header, const Capture& capture,
                                  const std::map<int, ProcessReport>& processes) {
  if (header.android_version) return {true, "capture.json android_version"};
  // The facts an agent writes from getprop (docs/capture-format.md); "model" is not one of them: an agent
  // on a Linux host writes a model of its own.
  for (const char* property : {"android_sdk", "build_fingerprint", "build_type"}) {
    if (header.facts.count(property) != 0) return {true, absl::StrCat("capture.json ", property)};
  }
  const Node* getprop = capture.Find(capture::kGetpropNode);
  if (getprop != nullptr && getprop->is_file()) return {true, capture::kGetpropNode};
  for (const auto& [pid, process] : processes) {
    if (process.name == "system_server") return {true, absl::StrCat("process ", pid, " system_server")};
  }
  return {};
}

}  // namespace memfleet::accounting
