#include "server/clock_skew.h"

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"

namespace memfleet::server {
namespace {

absl::string_view Av(std::string_view s) { return absl::string_view(s.data(), s.size()); }

bool Digits(std::string_view s, size_t pos, size_t n, int64_t* value) {
  int64_t v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *value = v;
  return true;
}

// Days from 1970-01-01 to year-month-day of the proleptic Gregorian calendar (H. Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

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
  if (t.size() != 20 || t[4] != '-' || t[7] != '-' || t[10] != 'T' || t[13] != ':' || t[16] != ':' || t[19] != 'Z') {
    return std::nullopt;
  }
  int64_t year, month, day, hour, minute, second;
  if (!Digits(t, 0, 4, &year) || !Digits(t, 5, 2, &month) || !Digits(t, 8, 2, &day) || !Digits(t, 11, 2, &hour) ||
      !Digits(t, 14, 2, &minute) || !Digits(t, 17, 2, &second)) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return std::nullopt;
  return DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
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
