#include "server/core/validation.h"

#include "absl/strings/str_cat.h"
#include "storage/timestamp.h"

namespace memfleet::server {
namespace {

absl::string_view Av(std::string_view s) { return absl::string_view(s.data(), s.size()); }

bool IsIdChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-' || c == ':' || c == '@' || c == '+';
}

absl::Status CheckId(std::string_view what, std::string_view id, size_t max_bytes) {
  if (id.empty()) return absl::InvalidArgumentError(absl::StrCat(Av(what), " is empty"));
  if (id.size() > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(Av(what), " \"", Snippet(id), "\" is longer than ", max_bytes, " bytes"));
  }
  if (!IsBoundedTextOf(id, 1, max_bytes, IsIdChar)) {
    return absl::InvalidArgumentError(
        absl::StrCat(Av(what), " \"", Snippet(id), "\" has a character outside [A-Za-z0-9._:@+-]"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckDeviceId(std::string_view device_id) { return CheckId("device id", device_id, kMaxDeviceIdBytes); }

absl::Status CheckCaptureId(std::string_view capture_id) {
  return CheckId("capture id", capture_id, kMaxCaptureIdBytes);
}

absl::Status CheckSweepId(std::string_view sweep_id) {
  if (sweep_id.empty()) return absl::OkStatus();
  return CheckId("sweep id", sweep_id, kMaxSweepIdBytes);
}

absl::Status CheckText(std::string_view field, std::string_view value, size_t max_bytes) {
  if (value.size() > max_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(Av(field), " is longer than ", max_bytes, " bytes"));
  }
  if (!HasNoControlBytes(value)) {
    return absl::InvalidArgumentError(absl::StrCat(Av(field), " \"", Snippet(value), "\" has a control character"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> CheckTime(std::string_view field, std::string_view value) {
  if (value.size() > 64) return absl::InvalidArgumentError(absl::StrCat(Av(field), " is not an RFC 3339 time"));
  absl::StatusOr<std::string> t = storage::NormalizeTimestamp(value, field);
  if (!t.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(Av(field), " \"", Snippet(value), "\" is not an RFC 3339 time like 2026-12-02T16:15:00Z"));
  }
  return t;
}

absl::StatusOr<std::string> CheckOptionalTime(std::string_view field, std::string_view value) {
  if (value.empty()) return std::string();
  return CheckTime(field, value);
}

}  // namespace memfleet::server
