// Test support: a steady clock moved by hand (server/core/clock.h), so that a test drives sweep and Hello
// deadlines, heartbeats and retention periods instead of waiting for them. Advance returns once every
// TaskRunner on the clock (server/core/task_runner.h) has run the tasks due by the new time, those they
// post that are due too: the test asserts right after it. Header-only.
//
//   ManualSteadyClock clock;
//   options.clock = &clock;                    // the component measures its deadlines on it
//   clock.Advance(std::chrono::seconds(61));   // a 60 s deadline has passed, and its task has run
//   clock.Advance({});                         // what is due now (a RunEvery's first run) has run
//
// Runners are told one after the other: a due task that one runner's task posts to another runner may
// still be pending when Advance returns. A task must not create or stop a TaskRunner on the clock it runs
// on (Advance holds the clock's list of runners meanwhile).
#ifndef MEMFLEET_TESTS_SUPPORT_MANUAL_CLOCK_H_
#define MEMFLEET_TESTS_SUPPORT_MANUAL_CLOCK_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <set>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "server/core/clock.h"

namespace memfleet::testing {

class ManualSteadyClock final : public server::SteadyClock {
 public:
  // Lock-free: runners read it with their own mutex held, which Advance takes after its own.
  std::chrono::steady_clock::time_point Now() override {
    return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(now_ns_.load()));
  }

  void Advance(std::chrono::nanoseconds by) {
    now_ns_ += by.count();
    absl::MutexLock lock(&mu_);
    for (Listener* listener : listeners_) listener->OnAdvanced();
  }

  void AddListener(Listener* listener) override {
    absl::MutexLock lock(&mu_);
    listeners_.insert(listener);
  }
  void RemoveListener(Listener* listener) override {
    absl::MutexLock lock(&mu_);
    listeners_.erase(listener);
  }

 private:
  // Starts well after zero, so that now minus a duration never underflows.
  std::atomic<int64_t> now_ns_{std::chrono::nanoseconds(std::chrono::hours(1000)).count()};
  absl::Mutex mu_;
  std::set<Listener*> listeners_ ABSL_GUARDED_BY(mu_);
};

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_MANUAL_CLOCK_H_
