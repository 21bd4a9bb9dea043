#include "cli/time_spec.h"

#include <charconv>
#include <cstdio>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "chart/figure_text.h"
#include "common/utc_time.h"

namespace memfleet::cli {
namespace {

constexpr int64_t kSecondsPerDay = 86400;
// 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the range four-digit RFC 3339 years can say.
constexpr int64_t kMinUnixS = -62167219200;
constexpr int64_t kMaxUnixS = 253402300799;

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysInMonth(int64_t y, int64_t m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

// Exactly `width` ASCII digits at text[pos].
bool Digits(std::string_view text, size_t pos, size_t width, int64_t& value) {
  if (pos + width > text.size()) return false;
  value = 0;
  for (size_t i = pos; i < pos + width; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    value = value * 10 + (text[i] - '0');
  }
  return true;
}

absl::Status NotRfc3339(std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("\"", std::string(text), "\" is not an RFC 3339 time (",
                                                 std::string(why), "); expected e.g. 2026-12-02T16:15:00Z"));
}

// The milliseconds an RFC 3339 time gives after its seconds ("...:00.25Z" -> ".250"); "" without a
// fraction. A UTC offset is whole minutes, so they are the same in UTC.
std::string MillisOf(std::string_view rfc3339) {
  if (rfc3339.size() < 21 || rfc3339[19] != '.') return "";
  std::string millis = ".";
  for (size_t i = 20; i < rfc3339.size() && i < 23 && rfc3339[i] >= '0' && rfc3339[i] <= '9'; ++i) {
    millis.push_back(rfc3339[i]);
  }
  millis.resize(4, '0');
  return millis;
}

}  // namespace

absl::StatusOr<int64_t> ParseRfc3339(std::string_view text) {
  int64_t year, month, day, hour, minute, second;
  if (!Digits(text, 0, 4, year) || text.size() < 5 || text[4] != '-' || !Digits(text, 5, 2, month) || text.size() < 8 ||
      text[7] != '-' || !Digits(text, 8, 2, day)) {
    return NotRfc3339(text, "the date must be YYYY-MM-DD");
  }
  if (text.size() < 11 || (text[10] != 'T' && text[10] != 't' && text[10] != ' ')) {
    return NotRfc3339(text, "a time of day must follow the date after a T");
  }
  if (!Digits(text, 11, 2, hour) || text.size() < 14 || text[13] != ':' || !Digits(text, 14, 2, minute) ||
      text.size() < 17 || text[16] != ':' || !Digits(text, 17, 2, second)) {
    return NotRfc3339(text, "the time must be HH:MM:SS");
  }
  if (month < 1 || month > 12) return NotRfc3339(text, "month out of range");
  if (day < 1 || day > DaysInMonth(year, month)) return NotRfc3339(text, "day out of range");
  if (hour > 23 || minute > 59 || second > 60) return NotRfc3339(text, "time of day out of range");
  if (second == 60) second = 59;  // a leap second: the store's timestamps have none
  size_t pos = 19;
  if (pos < text.size() && text[pos] == '.') {
    size_t start = ++pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
    if (pos == start) return NotRfc3339(text, "a digit must follow the decimal point");
  }
  int64_t offset_s = 0;
  if (pos < text.size() && (text[pos] == 'Z' || text[pos] == 'z')) {
    ++pos;
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    int64_t oh, om;
    if (!Digits(text, pos + 1, 2, oh) || pos + 3 >= text.size() || text[pos + 3] != ':' ||
        !Digits(text, pos + 4, 2, om) || oh > 23 || om > 59) {
      return NotRfc3339(text, "the UTC offset must be Z or +HH:MM / -HH:MM");
    }
    offset_s = (oh * 3600 + om * 60) * (text[pos] == '-' ? -1 : 1);
    pos += 6;
  } else {
    return NotRfc3339(text, "the time zone is missing: end with Z for UTC or give +HH:MM");
  }
  if (pos != text.size()) return NotRfc3339(text, "unexpected text after the time zone");
  return DaysFromCivil(year, month, day) * kSecondsPerDay + hour * 3600 + minute * 60 + second - offset_s;
}

absl::StatusOr<std::string> FormatRfc3339(int64_t unix_s) { return chart::FormatUtc(unix_s); }

absl::StatusOr<int64_t> ParseAgo(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("\"", std::string(text), "\" is not a time span (", std::string(why),
                                                   "); expected a number and a unit s, m, h, d or w, e.g. 24h or 7d"));
  };
  if (text.size() < 2) return bad("too short");
  int64_t unit_s = 0;
  switch (text.back()) {
    case 's':
      unit_s = 1;
      break;
    case 'm':
      unit_s = 60;
      break;
    case 'h':
      unit_s = 3600;
      break;
    case 'd':
      unit_s = kSecondsPerDay;
      break;
    case 'w':
      unit_s = 7 * kSecondsPerDay;
      break;
    default:
      return bad("unknown unit");
  }
  std::string_view number = text.substr(0, text.size() - 1);
  int64_t n = 0;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), n);
  if (ec == std::errc::result_out_of_range) return bad("number too large");
  if (ec != std::errc() || end != number.data() + number.size()) return bad("not a whole number");
  if (n <= 0) return bad("must be positive");
  if (n > (kMaxUnixS - kMinUnixS) / unit_s) return bad("longer than recorded time");
  return n * unit_s;
}

absl::StatusOr<std::string> ParseTimeSpec(std::string_view text, int64_t now_unix_s) {
  if (text.empty()) return absl::InvalidArgumentError("empty time: give a span such as 7d or an RFC 3339 time");
  // RFC 3339 starts with a four-digit year and a dash; a span never has a dash.
  if (text.size() >= 5 && text[4] == '-') {
    absl::StatusOr<int64_t> t = ParseRfc3339(text);
    if (!t.ok()) return t.status();
    absl::StatusOr<std::string> utc = FormatRfc3339(*t);
    if (utc.ok()) utc->insert(19, MillisOf(text));  // the server keeps times to the millisecond
    return utc;
  }
  absl::StatusOr<int64_t> ago = ParseAgo(text);
  if (!ago.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(ago.status().message(), ", or an RFC 3339 time such as 2026-12-02T16:15:00Z"));
  }
  if (now_unix_s < kMinUnixS + *ago) {
    return absl::InvalidArgumentError(absl::StrCat("\"", std::string(text), "\" reaches back before year 0000"));
  }
  return FormatRfc3339(now_unix_s - *ago);
}

}  // namespace memfleet::cli
