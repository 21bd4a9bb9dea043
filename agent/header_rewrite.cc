#include "agent/header_rewrite.h"

#include <exception>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "capture/capture_header.h"
#include "capture/node_path.h"
#include "common/bounded_json.h"

namespace memfleet::agent {
namespace {

bool Digits(std::string_view s, size_t pos, size_t n, int* value) {
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *value = v;
  return true;
}

}  // namespace

bool IsRfc3339UtcSeconds(std::string_view t) {
  // 0123456789012345678 9
  // YYYY-MM-DDTHH:MM:SSZ
  if (t.size() != 20 || t[4] != '-' || t[7] != '-' || t[10] != 'T' || t[13] != ':' || t[16] != ':' ||
      t[19] != 'Z') {
    return false;
  }
  int year, month, day, hour, minute, second;
  if (!Digits(t, 0, 4, &year) || !Digits(t, 5, 2, &month) || !Digits(t, 8, 2, &day) ||
      !Digits(t, 11, 2, &hour) || !Digits(t, 14, 2, &minute) || !Digits(t, 17, 2, &second)) {
    return false;
  }
  // Second 60 is a leap second, which RFC 3339 allows.
  return month >= 1 && month <= 12 && day >= 1 && day <= 31 && hour <= 23 && minute <= 59 && second <= 60;
}

absl::StatusOr<std::string> RewriteCaptureHeader(std::string_view json_text, const std::string& device_id,
                                                 const std::string& captured_at) {
  if (!IsRfc3339UtcSeconds(captured_at)) {
    return absl::InvalidArgumentError(
        absl::StrCat("capture time \"", captured_at, "\" is not RFC 3339 UTC (YYYY-MM-DDTHH:MM:SSZ)"));
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
    // `replace`: a field that is not UTF-8 must not throw out of dump().
    return header.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("cannot rewrite capture.json: ", QuotedSnippet(e.what(), 160)));
  }
}

absl::Status RewriteCaptureHeaderOf(capture::Capture& capture, const std::string& device_id,
                                    const std::string& captured_at) {
  const std::string* text = capture.FileContent(capture::kHeaderNode);
  if (text == nullptr) return absl::InvalidArgumentError("the capture has no capture.json header");
  absl::StatusOr<std::string> rewritten = RewriteCaptureHeader(*text, device_id, captured_at);
  if (!rewritten.ok()) return rewritten.status();
  capture.AddFile(capture::kHeaderNode, *std::move(rewritten));
  return absl::OkStatus();
}

}  // namespace memfleet::agent
