#include "agent/clock.h"

#include "common/utc_time.h"

namespace memfleet::agent {

std::string FormatRfc3339(std::chrono::system_clock::time_point t) { return FormatUtcMillis(t); }

std::string SystemClock::NowRfc3339() { return FormatRfc3339(std::chrono::system_clock::now()); }

}  // namespace memfleet::agent
