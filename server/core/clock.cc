#include "server/core/clock.h"

#include <chrono>

#include "common/log_line.h"
#include "common/utc_time.h"

namespace memfleet::server {

namespace {

class RealSteady final : public SteadyClock {
 public:
  std::chrono::steady_clock::time_point Now() override { return std::chrono::steady_clock::now(); }
};

}  // namespace

SteadyClock& RealSteadyClock() {
  static RealSteady* const clock = new RealSteady;
  return *clock;
}

std::string NowRfc3339() { return FormatUtcMillis(std::chrono::system_clock::now()); }

std::string CompactUtc(std::string_view rfc3339) {
  std::string out;
  out.reserve(rfc3339.size());
  bool fraction = false;
  for (char c : rfc3339) {
    fraction = (fraction || c == '.') && c != 'Z';
    if (c != '-' && c != ':' && !fraction) out.push_back(c);
  }
  return out;
}

void LogLine(std::string_view message) { WriteLogLine("memfleet-server", message); }

}  // namespace memfleet::server
