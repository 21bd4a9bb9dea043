// The time form memfleet writes and stores: RFC 3339 UTC with milliseconds, "YYYY-MM-DDTHH:MM:SS.mmmZ".
// Every stamp has this one shape, so comparing the strings compares the times (docs/capture-format.md,
// "captured_at"). The older whole-second form "YYYY-MM-DDTHH:MM:SSZ" is still read: agents before the
// change write it, and their spools drain after an upgrade.
//
//   FormatUtcMillis(std::chrono::system_clock::now());   // "2026-12-02T16:15:00.123Z"
//   UtcMillisOf("2026-12-02T16:15:00.123Z");              // 1796228100123
//   UtcMillisOf("2026-12-02T16:15:00Z");                  // 1796228100000
//   DaysFromCivil(1970, 1, 2);                            // 1 (the calendar arithmetic under both)
//   CivilFromDays(1, &y, &m, &d);                         // 1970-01-02
//
// Header-only; pure except FormatUtcMillis's gmtime_r; thread-safe.
#ifndef MEMFLEET_COMMON_UTC_TIME_H_
#define MEMFLEET_COMMON_UTC_TIME_H_

#include <time.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace memfleet {

inline std::string FormatUtcMillis(std::chrono::system_clock::time_point at) {
  const long long ms = std::chrono::duration_cast<std::chrono::milliseconds>(at.time_since_epoch()).count();
  const long long floor_s = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
  const time_t seconds = static_cast<time_t>(floor_s);
  struct tm utc {};
  gmtime_r(&seconds, &utc);
  char stamp[64];
  size_t n = strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(stamp + n, sizeof(stamp) - n, ".%03dZ", static_cast<int>(ms - floor_s * 1000));
  return stamp;
}

// Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's days_from_civil); month 1-12.
inline int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// The date of a day count from 1970-01-01, the inverse of DaysFromCivil (H. Hinnant's civil_from_days).
inline void CivilFromDays(int64_t z, int64_t* y, int64_t* m, int64_t* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = yoe + era * 400 + (*m <= 2);
}

namespace utc_time_internal {

inline bool Digits(std::string_view s, size_t pos, size_t n, int64_t* value) {
  int64_t v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *value = v;
  return true;
}

}  // namespace utc_time_internal

// Milliseconds since 1970-01-01T00:00:00Z of a time in either form above (years 0000-9999; a leap second
// :60 counts as the next second); nullopt for any other text.
inline std::optional<int64_t> UtcMillisOf(std::string_view t) {
  using utc_time_internal::Digits;
  const bool has_millis = t.size() == 24 && t[19] == '.';
  if ((t.size() != 20 && !has_millis) || t[4] != '-' || t[7] != '-' || t[10] != 'T' || t[13] != ':' || t[16] != ':' ||
      t.back() != 'Z') {
    return std::nullopt;
  }
  int64_t year, month, day, hour, minute, second, millis = 0;
  if (!Digits(t, 0, 4, &year) || !Digits(t, 5, 2, &month) || !Digits(t, 8, 2, &day) || !Digits(t, 11, 2, &hour) ||
      !Digits(t, 14, 2, &minute) || !Digits(t, 17, 2, &second) || (has_millis && !Digits(t, 20, 3, &millis))) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return std::nullopt;
  const int64_t seconds = DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
  return seconds * 1000 + millis;
}

}  // namespace memfleet

#endif  // MEMFLEET_COMMON_UTC_TIME_H_
