// Clock: the agent's view of time, injected so that tests can fake it — the wall time a capture is
// stamped with (RFC 3339 UTC) and a steady time for measuring durations.
//
//   SystemClock clock;
//   std::string at = clock.NowRfc3339();   // "2026-12-02T16:15:00.123Z"
//
// SystemClock is thread-safe; fakes need not be.
#ifndef MEMFLEET_AGENT_CLOCK_H_
#define MEMFLEET_AGENT_CLOCK_H_

#include <chrono>
#include <string>

namespace memfleet::agent {

class Clock {
 public:
  virtual ~Clock() = default;
  // UTC, milliseconds: "YYYY-MM-DDTHH:MM:SS.mmmZ" (common/utc_time.h; lexicographic order is time order).
  virtual std::string NowRfc3339() = 0;
  virtual std::chrono::steady_clock::time_point SteadyNow() = 0;
};

class SystemClock final : public Clock {
 public:
  std::string NowRfc3339() override;
  std::chrono::steady_clock::time_point SteadyNow() override { return std::chrono::steady_clock::now(); }
};

// "YYYY-MM-DDTHH:MM:SS.mmmZ" for a wall time (sub-millisecond part dropped).
std::string FormatRfc3339(std::chrono::system_clock::time_point t);

}  // namespace memfleet::agent

#endif  // MEMFLEET_AGENT_CLOCK_H_
