#include "agent/agent_log.h"

#include <time.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "absl/synchronization/mutex.h"

namespace memfleet::agent {

void LogLine(std::string_view message) {
  // Never destroyed: threads may still log while the process exits.
  static absl::Mutex* const mu = new absl::Mutex;
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  time_t seconds = static_cast<time_t>(ms / 1000);
  struct tm utc {};
  gmtime_r(&seconds, &utc);
  char stamp[32];
  size_t n = strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &utc);
  stamp[n] = '\0';
  std::string line;
  line.reserve(message.size() + 48);
  line.append(stamp);
  char frac[8];
  snprintf(frac, sizeof(frac), ".%03dZ", static_cast<int>(ms % 1000));
  line.append(frac);
  line.append(" memfleet-agent: ");
  line.append(message.data(), message.size());
  line.push_back('\n');
  absl::MutexLock lock(mu);
  fwrite(line.data(), 1, line.size(), stderr);
  fflush(stderr);
}

}  // namespace memfleet::agent
