#include "agent/clock.h"

#include <time.h>

namespace memfleet::agent {

std::string FormatRfc3339(std::chrono::system_clock::time_point t) {
  time_t seconds = std::chrono::system_clock::to_time_t(t);
  struct tm utc {};
  gmtime_r(&seconds, &utc);
  char buf[32];
  size_t n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return std::string(buf, n);
}

std::string SystemClock::NowRfc3339() { return FormatRfc3339(std::chrono::system_clock::now()); }

}  // namespace memfleet::agent
