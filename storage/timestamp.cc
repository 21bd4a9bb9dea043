#include "storage/timestamp.h"

#include <cstdint>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/utc_time.h"

namespace memfleet::storage {
namespace {

bool IsLeapYear(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysInMonth(int64_t y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeapYear(y) ? 29 : kDays[m - 1];
}

// Reads exactly `n` digits at `pos`.
bool Digits(std::string_view s, size_t pos, size_t n, int64_t* out) {
  if (pos + n > s.size()) return false;
  int64_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = s[pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

bool Expect(std::string_view s, size_t pos, char c) { return pos < s.size() && s[pos] == c; }

}  // namespace

absl::StatusOr<std::string> NormalizeTimestamp(std::string_view text, std::string_view what) {
  auto bad = [&](const char* why) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(what), " \"", std::string(text.substr(0, 64)),
                                                   "\" is not an RFC 3339 date-time (", why,
                                                   "); expected e.g. 2024-05-01T10:00:00Z"));
  };
  int64_t year, month, day, hour, minute, second;
  if (!Digits(text, 0, 4, &year) || !Expect(text, 4, '-') || !Digits(text, 5, 2, &month) || !Expect(text, 7, '-') ||
      !Digits(text, 8, 2, &day)) {
    return bad("date must be YYYY-MM-DD");
  }
  if (!(Expect(text, 10, 'T') || Expect(text, 10, 't') || Expect(text, 10, ' '))) {
    return bad("date and time must be separated by 'T'");
  }
  if (!Digits(text, 11, 2, &hour) || !Expect(text, 13, ':') || !Digits(text, 14, 2, &minute) ||
      !Expect(text, 16, ':') || !Digits(text, 17, 2, &second)) {
    return bad("time must be HH:MM:SS");
  }
  if (month < 1 || month > 12) return bad("month out of range");
  if (day < 1 || day > DaysInMonth(year, static_cast<int>(month))) return bad("day out of range");
  if (hour > 23 || minute > 59 || second > 60) return bad("time out of range");
  size_t pos = 19;
  int64_t millis = 0;
  if (Expect(text, pos, '.')) {
    ++pos;
    size_t first = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      if (pos - first < 3) millis = millis * 10 + (text[pos] - '0');
      ++pos;
    }
    if (pos == first) return bad("empty fraction of a second");
    for (size_t digits = pos - first; digits < 3; ++digits) millis *= 10;
  }
  int64_t offset_minutes = 0;
  if (Expect(text, pos, 'Z') || Expect(text, pos, 'z')) {
    ++pos;
  } else if (Expect(text, pos, '+') || Expect(text, pos, '-')) {
    const bool negative = text[pos] == '-';
    int64_t off_h, off_m;
    if (!Digits(text, pos + 1, 2, &off_h) || !Expect(text, pos + 3, ':') || !Digits(text, pos + 4, 2, &off_m) ||
        off_h > 23 || off_m > 59) {
      return bad("offset must be Z or +HH:MM / -HH:MM");
    }
    offset_minutes = (off_h * 60 + off_m) * (negative ? -1 : 1);
    pos += 6;
  } else {
    return bad("missing time zone (Z or +HH:MM)");
  }
  if (pos != text.size()) return bad("trailing characters");

  const bool leap_second = second == 60;
  // Local time minus its offset is UTC; a leap second is shifted as :59 and written back as :60.
  int64_t total = DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + (leap_second ? 59 : second) -
                  offset_minutes * 60;
  int64_t days = total >= 0 ? total / 86400 : -((-total + 86399) / 86400);
  int64_t secs = total - days * 86400;
  int64_t y, m, d;
  CivilFromDays(days, &y, &m, &d);
  if (y < 0 || y > 9999) return bad("year out of range after conversion to UTC");
  const int64_t hh = secs / 3600, mm = (secs % 3600) / 60, ss = leap_second ? 60 : secs % 60;
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", static_cast<int>(y), static_cast<int>(m),
                static_cast<int>(d), static_cast<int>(hh), static_cast<int>(mm), static_cast<int>(ss),
                static_cast<int>(millis));
  return std::string(buf);
}

}  // namespace memfleet::storage
