// Device clocks against the server's: how far a device's time is from the server's, and the check that
// keeps a capture dated far in the future (a device clock at 9999-12-31) from becoming the device's
// "latest" for good. The device's time is kept as given; only captures too far ahead are refused.
//
//   std::optional<int64_t> skew_s = ClockSkewSeconds("2026-12-02T16:20:00Z", "2026-12-02T16:15:00Z");  // 300
//   MEMFLEET_RETURN_IF_ERROR(CheckNotAhead(captured_at, NowRfc3339(), std::chrono::minutes(10)));
//
// Pure functions; thread-safe.
#ifndef MEMFLEET_SERVER_INGEST_CLOCK_SKEW_H_
#define MEMFLEET_SERVER_INGEST_CLOCK_SKEW_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/status.h"

namespace memfleet::server {

// Default of memfleet-server --max-clock-skew-s: NTP-synced devices are within a second; ten minutes
// leaves room for a phone that lost its network time without letting a capture claim tomorrow.
inline constexpr std::chrono::seconds kDefaultMaxClockSkew{600};

// Whole seconds since 1970-01-01T00:00:00Z (rounded down) of a time in the store's form
// ("YYYY-MM-DDTHH:MM:SS.mmmZ", or the older "YYYY-MM-DDTHH:MM:SSZ"; common/utc_time.h); nullopt for any
// other text.
std::optional<int64_t> EpochSeconds(std::string_view rfc3339_utc);

// `device_time` minus `server_time` in seconds (positive: the device is ahead); nullopt when either is
// not in the store's form.
std::optional<int64_t> ClockSkewSeconds(std::string_view device_time, std::string_view server_time);

// OK unless `captured_at` is more than `max_skew` after `server_now` (both in the store's form):
// OutOfRange, saying by how much and what to fix. A time that does not parse is InvalidArgument.
absl::Status CheckNotAhead(std::string_view captured_at, std::string_view server_now, std::chrono::seconds max_skew);

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_INGEST_CLOCK_SKEW_H_
