#include "chart/figure_text.h"

#include <cstdio>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/utc_time.h"

namespace memfleet::chart {
namespace {

constexpr int64_t kSecondsPerDay = 86400;
// 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the range four-digit RFC 3339 years can say.
constexpr int64_t kMinUnixS = -62167219200;
constexpr int64_t kMaxUnixS = 253402300799;

}  // namespace

std::string FormatKb(long long kb) {
  bool negative = kb < 0;
  unsigned long long v = negative ? 0ULL - static_cast<unsigned long long>(kb) : static_cast<unsigned long long>(kb);
  std::string digits = std::to_string(v);
  std::string out;
  int n = static_cast<int>(digits.size());
  for (int i = 0; i < n; ++i) {
    out += digits[static_cast<size_t>(i)];
    int left = n - 1 - i;
    if (left > 0 && left % 3 == 0) out += ',';
  }
  return negative ? "-" + out : out;
}

std::string CountWithUnknown(uint64_t known, uint64_t unknown) {
  return unknown == 0 ? std::to_string(known) : absl::StrCat(known, " (+", unknown, " unknown)");
}

std::string PartOfCountWithUnknown(uint64_t part, uint64_t known, uint64_t unknown) {
  return absl::StrCat(part, " of ", CountWithUnknown(known, unknown));
}

absl::StatusOr<std::string> FormatUtc(int64_t unix_s) {
  if (unix_s < kMinUnixS || unix_s > kMaxUnixS) {
    return absl::InvalidArgumentError(absl::StrCat("time ", unix_s, " s is outside years 0000..9999"));
  }
  int64_t days = unix_s / kSecondsPerDay, secs = unix_s % kSecondsPerDay;
  if (secs < 0) {
    secs += kSecondsPerDay;
    --days;
  }
  int64_t y, m, d;
  CivilFromDays(days, &y, &m, &d);
  char buf[96];  // roomy enough for any int64 fields, so -Wformat-truncation is satisfied
  std::snprintf(buf, sizeof buf, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lldZ", static_cast<long long>(y),
                static_cast<long long>(m), static_cast<long long>(d), static_cast<long long>(secs / 3600),
                static_cast<long long>(secs / 60 % 60), static_cast<long long>(secs % 60));
  return std::string(buf);
}

}  // namespace memfleet::chart
