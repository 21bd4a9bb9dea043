// Input checks shared by the agent and query services: ids, bounded text fields, timestamps. Everything
// that arrives over the network goes through one of these before it reaches the store or a log line.
//
//   MEMFLEET_RETURN_IF_ERROR(CheckDeviceId(request.device_id()));
//   MEMFLEET_ASSIGN_OR_RETURN(std::string at, CheckOptionalTime("at", request.at()));
//
// Pure functions; thread-safe.
#ifndef MEMFLEET_SERVER_CORE_VALIDATION_H_
#define MEMFLEET_SERVER_CORE_VALIDATION_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/untrusted_text.h"  // Snippet, for the messages of the checks

namespace memfleet::server {

inline constexpr size_t kMaxDeviceIdBytes = 128;
inline constexpr size_t kMaxCaptureIdBytes = 256;
inline constexpr size_t kMaxSweepIdBytes = 128;
inline constexpr size_t kMaxNameBytes = 1024;  // process names, models, fingerprints

// Letters, digits and . _ - : @ + (adb serials, host:port ids), 1..kMaxDeviceIdBytes bytes.
absl::Status CheckDeviceId(std::string_view device_id);
// Same alphabet, 1..kMaxCaptureIdBytes.
absl::Status CheckCaptureId(std::string_view capture_id);
// "" or the sweep id alphabet, up to kMaxSweepIdBytes.
absl::Status CheckSweepId(std::string_view sweep_id);
// At most max_bytes, no control characters (a field a log line or a table will print).
absl::Status CheckText(std::string_view field, std::string_view value, size_t max_bytes = kMaxNameBytes);
// RFC 3339, normalized to "YYYY-MM-DDTHH:MM:SSZ"; "" stays "" for the optional form.
absl::StatusOr<std::string> CheckTime(std::string_view field, std::string_view value);
absl::StatusOr<std::string> CheckOptionalTime(std::string_view field, std::string_view value);

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_CORE_VALIDATION_H_
