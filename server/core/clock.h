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

namespace memfleet::server {

// The steady time of deadlines and periods (sweeps, streams waiting for their Hello, heartbeats,
// retention), injected so that tests move it by hand (tests/support/manual_clock.h) instead of waiting.
// Components do not wait on it themselves: they post tasks to a TaskRunner (server/core/task_runner.h),
// the one listener a clock that jumps tells. The real clock never jumps.
class SteadyClock {
 public:
  // Told by a clock moved by hand, after it moved; returns once it has acted on the new time.
  class Listener {
   public:
    virtual void OnAdvanced() = 0;

   protected:
    virtual ~Listener() = default;

   private:
    friend class TaskRunner;  // the only listener
    Listener() = default;
  };

  virtual ~SteadyClock() = default;
  virtual std::chrono::steady_clock::time_point Now() = 0;
  virtual void AddListener(Listener* /*listener*/) {}
  virtual void RemoveListener(Listener* /*listener*/) {}
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
