// Times on the command line: RFC 3339 timestamps and "how long ago" spans ("7d", "24h"), turned into
// the server's RFC 3339 UTC form "YYYY-MM-DDTHH:MM:SSZ". Pure: the current time is a parameter.
//
//   absl::StatusOr<std::string> since = ParseTimeSpec("7d", /*now_unix_s=*/1764690900);
//   // "2025-11-25T15:55:00Z"; "2026-12-02T18:15:00+02:00" -> "2026-12-02T16:15:00Z"
#ifndef MEMFLEET_CLI_TIME_SPEC_H_
#define MEMFLEET_CLI_TIME_SPEC_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace memfleet::cli {

// Seconds since the Unix epoch of an RFC 3339 date-time ("2026-12-02T16:15:00Z", "...t16:15:00.5+02:00",
// a space instead of T). Fractions of a second are dropped. InvalidArgument names what is wrong.
absl::StatusOr<int64_t> ParseRfc3339(std::string_view text);

// "YYYY-MM-DDTHH:MM:SSZ" for years 0000..9999; InvalidArgument outside them.
absl::StatusOr<std::string> FormatRfc3339(int64_t unix_s);

// A span back from now: a positive integer and a unit, s m h d w ("90m", "24h", "7d", "2w").
absl::StatusOr<int64_t> ParseAgo(std::string_view text);

// --since / --at: a span back from now_unix_s (ParseAgo) or an RFC 3339 time, as RFC 3339 UTC; the
// milliseconds of a time that gives them are kept ("...T18:15:00.25+02:00" -> "...T16:15:00.250Z").
absl::StatusOr<std::string> ParseTimeSpec(std::string_view text, int64_t now_unix_s);

}  // namespace memfleet::cli

#endif  // MEMFLEET_CLI_TIME_SPEC_H_
