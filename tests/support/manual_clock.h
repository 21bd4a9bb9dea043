// Test support: a steady clock moved by hand (server/core/clock.h), so that a test drives sweep and Hello
// deadlines instead of waiting for them. Advance wakes every registered sleeper. Header-only.
//
//   ManualSteadyClock clock;
//   options.clock = &clock;          // the component measures its deadlines on it
//   clock.Advance(std::chrono::seconds(61));   // a 60 s deadline has passed, at once
#ifndef MEMFLEET_TESTS_SUPPORT_MANUAL_CLOCK_H_
#define MEMFLEET_TESTS_SUPPORT_MANUAL_CLOCK_H_

#include <atomic>
#include <chrono>
#include <map>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "server/core/clock.h"

namespace memfleet::testing {

class ManualSteadyClock final : public server::SteadyClock {
 public:
  // Lock-free: a sleeper reads it with its own mutex held, which Advance takes after its own.
  std::chrono::steady_clock::time_point Now() override {
    return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(now_ns_.load()));
  }

  void Advance(std::chrono::nanoseconds by) {
    now_ns_ += by.count();
    absl::MutexLock lock(&mu_);
    for (const auto& [cv, sleeper_mu] : sleepers_) {
      absl::MutexLock sleeper_lock(sleeper_mu);
      cv->SignalAll();
    }
  }

  void AddSleeper(absl::Mutex* mu, absl::CondVar* cv) override {
    absl::MutexLock lock(&mu_);
    sleepers_[cv] = mu;
  }
  void RemoveSleeper(absl::CondVar* cv) override {
    absl::MutexLock lock(&mu_);
    sleepers_.erase(cv);
  }

 private:
  // Starts well after zero, so that now minus a duration never underflows.
  std::atomic<int64_t> now_ns_{std::chrono::nanoseconds(std::chrono::hours(1000)).count()};
  absl::Mutex mu_;
  std::map<absl::CondVar*, absl::Mutex*> sleepers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_MANUAL_CLOCK_H_
