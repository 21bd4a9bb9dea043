#include "server/clock.h"

#include <cstdio>
#include <ctime>
#include <iostream>

#include "absl/synchronization/mutex.h"

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

void LogLine(std::string_view message) {
  // Never destroyed: threads may still log while the process exits.
  static absl::Mutex* const mu = new absl::Mutex;
  std::string line = NowRfc3339();
  line += " memfleet-server: ";
  line.append(message.data(), message.size());
  line += '\n';
  absl::MutexLock lock(mu);
  std::cerr << line << std::flush;
}

}  // namespace memfleet::server
