// The one canonical time format of the store: RFC 3339 UTC with milliseconds, "YYYY-MM-DDTHH:MM:SS.mmmZ"
// (common/utc_time.h). Every time is normalised to it before it is written or compared, because the
// store's range queries (GetReport at a time, ProcessHistory since) and its ORDER BYs compare these
// strings lexicographically, which is chronological only when all of them have this exact shape:
// "10:00:00Z" would sort after "10:00:00.500Z" ('Z' > '.'), so a whole second is written ".000Z", and
// schema version 12 rewrote the whole-second times of older databases so.
//
//   NormalizeTimestamp("2024-05-01T12:00:00.250+02:00")  ->  "2024-05-01T10:00:00.250Z"
//   NormalizeTimestamp("2024-05-01T10:00:00Z")           ->  "2024-05-01T10:00:00.000Z"
//
// Digits past the millisecond are dropped (truncated). Pure functions; thread-safe.
#ifndef MEMFLEET_STORAGE_TIMESTAMP_H_
#define MEMFLEET_STORAGE_TIMESTAMP_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace memfleet::storage {

// Accepts RFC 3339 date-times ('T', 't' or ' ' separator; optional fraction; 'Z', 'z' or +HH:MM/-HH:MM)
// and returns the UTC form above. InvalidArgument naming `what` for anything else, including impossible
// dates (2023-02-29) and results outside years 0000-9999. A leap second (:60) is kept as :60.
absl::StatusOr<std::string> NormalizeTimestamp(std::string_view text, std::string_view what = "time");

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_TIMESTAMP_H_
