// The server's clocks (the engine itself reads none): the wall clock in the store's RFC 3339 UTC form
// and the compact form used inside ids, and the steady clock that deadlines are measured on.
//
//   std::string now = NowRfc3339();        // "2026-12-02T16:15:00.123Z" (common/utc_time.h)
//   CompactUtc(now);                       // "20261202T161500Z"
//
// Thread-safe.
#ifndef MEMFLEET_SERVER_CORE_CLOCK_H_
#define MEMFLEET_SERVER_CORE_CLOCK_H_

#include <chrono>
#include <string>
#include <string_view>

#include "absl/synchronization/mutex.h"

namespace memfleet::server {

// The steady time of deadlines (sweeps, streams waiting for their Hello), injected so that tests move it
// by hand (tests/support/manual_clock.h) instead of waiting for real deadlines. A component whose thread
// sleeps until a deadline registers its mutex and condition variable as a sleeper: a clock that jumps
// signals them, with the mutex held, so the thread re-reads the time. The real clock never jumps.
class SteadyClock {
 public:
  virtual ~SteadyClock() = default;
  virtual std::chrono::steady_clock::time_point Now() = 0;
  // `mu` guards the sleeper's state and is held when it reads Now() and waits on `cv`.
  virtual void AddSleeper(absl::Mutex* /*mu*/, absl::CondVar* /*cv*/) {}
  virtual void RemoveSleeper(absl::CondVar* /*cv*/) {}
};

// std::chrono::steady_clock; the default of every component.
SteadyClock& RealSteadyClock();

std::string NowRfc3339();
// "YYYY-MM-DDTHH:MM:SS.mmmZ" or "YYYY-MM-DDTHH:MM:SSZ" -> "YYYYMMDDTHHMMSSZ" (ids keep whole seconds);
// other text is returned with '-', ':' and a fraction of a second removed.
std::string CompactUtc(std::string_view rfc3339);

// One line on stderr, prefixed with the time: the server's operational log (common/log_line.h).
void LogLine(std::string_view message);

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_CORE_CLOCK_H_
