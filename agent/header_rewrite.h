// The capture header as the agent sends it: a capture tree's capture.json is replayed with the agent's
// --device-id and the capture time written over its own, every other field (page_size, ddr_size_kb,
// model, ...) kept, so that a recorded capture replays as a live device. (Capture ids: proto/capture_id.h.)
//
//   absl::StatusOr<std::string> h = RewriteCaptureHeader(json, "lab-7", "2026-12-02T16:15:00.123Z");
//
// Pure functions; thread-safe.
#ifndef MEMFLEET_AGENT_HEADER_REWRITE_H_
#define MEMFLEET_AGENT_HEADER_REWRITE_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "capture/capture.h"
#include "capture/labels.h"

namespace memfleet::agent {

// True for "YYYY-MM-DDTHH:MM:SS.mmmZ" or "YYYY-MM-DDTHH:MM:SSZ" with a plausible month, day, hour,
// minute and second (common/utc_time.h).
bool IsRfc3339Utc(std::string_view text);

// capture.json with "device_id" and "captured_at" replaced (added when missing), "labels" set to the
// agent's `labels` (removed when it has none: a replayed tree's own labels are not this agent's), the other
// fields kept in their order. InvalidArgument when the text is not a JSON object or `captured_at` is not
// RFC 3339 UTC.
absl::StatusOr<std::string> RewriteCaptureHeader(std::string_view json_text, const std::string& device_id,
                                                 const std::string& captured_at, const capture::Labels& labels = {});

// Rewrites the capture's "capture.json" node in place; InvalidArgument when it has none (or it is not a
// file) or RewriteCaptureHeader fails.
absl::Status RewriteCaptureHeaderOf(capture::Capture& capture, const std::string& device_id,
                                    const std::string& captured_at, const capture::Labels& labels = {});

}  // namespace memfleet::agent

#endif  // MEMFLEET_AGENT_HEADER_REWRITE_H_
