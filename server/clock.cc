#include "server/clock.h"

#include <cstdio>
#include <ctime>

#include "common/log_line.h"

namespace memfleet::server {

std::string NowRfc3339() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string CompactUtc(std::string_view rfc3339) {
  std::string out;
  out.reserve(rfc3339.size());
  for (char c : rfc3339) {
    if (c != '-' && c != ':') out.push_back(c);
  }
  return out;
}

void LogLine(std::string_view message) { WriteLogLine("memfleet-server", message); }

}  // namespace memfleet::server
