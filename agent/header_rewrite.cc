#include "agent/header_rewrite.h"

#include <exception>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "capture/capture_header.h"
#include "capture/node_path.h"
#include "common/bounded_json.h"
#include "common/utc_time.h"

namespace memfleet::agent {

bool IsRfc3339Utc(std::string_view t) { return UtcMillisOf(t).has_value(); }

absl::StatusOr<std::string> RewriteCaptureHeader(std::string_view json_text, const std::string& device_id,
                                                 const std::string& captured_at, const capture::Labels& labels) {
  if (!IsRfc3339Utc(captured_at)) {
    return absl::InvalidArgumentError(
        absl::StrCat("capture time \"", captured_at, "\" is not RFC 3339 UTC (YYYY-MM-DDTHH:MM:SS.mmmZ)"));
  }
  // Bounded as the server bounds it: a hostile capture tree must not overflow the agent's stack in dump().
  absl::StatusOr<nlohmann::ordered_json> parsed =
      ParseBoundedOrderedJson(json_text, JsonBounds{capture::kMaxCaptureHeaderBytes, kMaxJsonDepth});
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("capture.json: ", parsed.status().message(), "; fix or re-record the capture tree"));
  }
  nlohmann::ordered_json& header = *parsed;
  if (!header.is_object()) {
    return absl::InvalidArgumentError("capture.json is not a JSON object; fix or re-record the capture tree");
  }
  try {
    header["device_id"] = device_id;
    header["captured_at"] = captured_at;
    header.erase("labels");
    if (!labels.empty()) header["labels"] = labels;
    // `replace`: a field that is not UTF-8 must not throw out of dump().
    return header.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("cannot rewrite capture.json: ", QuotedSnippet(e.what(), 160)));
  }
}

absl::Status RewriteCaptureHeaderOf(capture::Capture& capture, const std::string& device_id,
                                    const std::string& captured_at, const capture::Labels& labels) {
  const std::string* text = capture.FileContent(capture::kHeaderNode);
  if (text == nullptr) return absl::InvalidArgumentError("the capture has no capture.json header");
  absl::StatusOr<std::string> rewritten = RewriteCaptureHeader(*text, device_id, captured_at, labels);
  if (!rewritten.ok()) return rewritten.status();
  capture.AddFile(capture::kHeaderNode, *std::move(rewritten));
  return absl::OkStatus();
}

}  // namespace memfleet::agent
