#include "server/ingest/clock_skew.h"

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/utc_time.h"

namespace memfleet::server {
namespace {

absl::string_view Av(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// "123 s", "4.5 h", "2.0 days": a skew an operator can read at a glance.
std::string Duration(int64_t seconds) {
  if (seconds < 3600) return absl::StrCat(seconds, " s");
  char buf[32];
  if (seconds < 2 * 86400) {
    snprintf(buf, sizeof(buf), "%.1f h", static_cast<double>(seconds) / 3600.0);
  } else {
    snprintf(buf, sizeof(buf), "%.0f days", static_cast<double>(seconds) / 86400.0);
  }
  return buf;
}

}  // namespace

std::optional<int64_t> EpochSeconds(std::string_view t) {
  std::optional<int64_t> ms = UtcMillisOf(t);
  if (!ms.has_value()) return std::nullopt;
  return *ms >= 0 ? *ms / 1000 : -((-*ms + 999) / 1000);
}

std::optional<int64_t> ClockSkewSeconds(std::string_view device_time, std::string_view server_time) {
  std::optional<int64_t> device = EpochSeconds(device_time);
  std::optional<int64_t> server = EpochSeconds(server_time);
  if (!device.has_value() || !server.has_value()) return std::nullopt;
  return *device - *server;
}

absl::Status CheckNotAhead(std::string_view captured_at, std::string_view server_now, std::chrono::seconds max_skew) {
  std::optional<int64_t> ahead_s = ClockSkewSeconds(captured_at, server_now);
  if (!ahead_s.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot compare captured_at \"", Av(captured_at),
                                                   "\" with the server clock \"", Av(server_now), "\""));
  }
  if (*ahead_s <= max_skew.count()) return absl::OkStatus();
  return absl::OutOfRangeError(absl::StrCat(
      "captured_at ", Av(captured_at), " is ", Duration(*ahead_s), " ahead of the server clock (", Av(server_now),
      "; at most ", max_skew.count(), " s allowed, memfleet-server --max-clock-skew-s): fix the device's clock"));
}

}  // namespace memfleet::server
