// HeapPolicy's trims: once a period on the injected clock (a hand-moved one, so each assertion follows an
// Advance with no wait), none after Stop or with no period, and a Stop that does not wait for the period
// to end. Two tests run on the real clock. The trim is an injected counter: what malloc_trim hands back
// depends on the whole process's heap, not on this component.
#include "server/core/heap_policy.h"

#include <chrono>
#include <functional>
#include <future>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/support/manual_clock.h"

namespace memfleet::server {
namespace {

using namespace std::chrono_literals;

// Trims counted on the policy's thread, read (and waited for) on the test's.
class TrimCounter {
 public:
  std::function<void()> Trim() {
    return [this] {
      absl::MutexLock lock(&mu_);
      ++trims_;
    };
  }
  int trims() const {
    absl::MutexLock lock(&mu_);
    return trims_;
  }
  // Whether `n` trims ran before `timeout` passed.
  bool WaitForTrims(int n, absl::Duration timeout) const {
    absl::MutexLock lock(&mu_);
    auto done = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return trims_ >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&done), timeout);
  }

 private:
  mutable absl::Mutex mu_;
  int trims_ ABSL_GUARDED_BY(mu_) = 0;
};

HeapPolicyOptions TrimEvery(std::chrono::milliseconds period, TrimCounter& counter, SteadyClock* clock) {
  HeapPolicyOptions options;
  options.trim_period = period;
  options.trim = counter.Trim();
  options.clock = clock;
  return options;
}

TEST(HeapPolicyTest, TrimsOnceAPeriodFromAPeriodAfterItsStartWithoutMakingUpMissedTrims) {
  testing::ManualSteadyClock clock;
  TrimCounter counter;
  HeapPolicy heap(TrimEvery(1000ms, counter, &clock));
  clock.Advance({});
  EXPECT_EQ(counter.trims(), 0) << "the first trim is a period after the start, not at it";
  clock.Advance(999ms);
  EXPECT_EQ(counter.trims(), 0);
  clock.Advance(1ms);
  EXPECT_EQ(counter.trims(), 1);
  clock.Advance(1000ms);
  EXPECT_EQ(counter.trims(), 2);
  clock.Advance(5000ms);  // a stalled clock or process: one trim, not five
  EXPECT_EQ(counter.trims(), 3);
  clock.Advance(999ms);
  EXPECT_EQ(counter.trims(), 3);
  clock.Advance(1ms);
  EXPECT_EQ(counter.trims(), 4);
}

TEST(HeapPolicyTest, NoTrimRunsAfterStopAndStopIsIdempotent) {
  testing::ManualSteadyClock clock;
  TrimCounter counter;
  HeapPolicy heap(TrimEvery(1000ms, counter, &clock));
  clock.Advance(1000ms);
  ASSERT_EQ(counter.trims(), 1);
  heap.Stop();
  clock.Advance(10s);
  EXPECT_EQ(counter.trims(), 1);
  heap.Stop();  // and the destructor stops it a third time
}

TEST(HeapPolicyTest, AZeroPeriodNeverTrims) {
  testing::ManualSteadyClock clock;
  TrimCounter counter;
  HeapPolicy heap(TrimEvery(0ms, counter, &clock));
  clock.Advance(24h);
  EXPECT_EQ(counter.trims(), 0);
}

TEST(HeapPolicyTest, StopReturnsWithoutWaitingForThePeriodToEnd) {
  TrimCounter counter;
  HeapPolicy heap(TrimEvery(std::chrono::hours(1), counter, nullptr));
  // Stop on another thread: were it to wait out the hour, the wait below would give up.
  std::future<void> stopped = std::async(std::launch::async, [&] { heap.Stop(); });
  EXPECT_EQ(stopped.wait_for(60s), std::future_status::ready);
  EXPECT_EQ(counter.trims(), 0);
}

TEST(HeapPolicyTest, TrimsPeriodicallyOnTheRealClock) {
  TrimCounter counter;
  HeapPolicy heap(TrimEvery(1ms, counter, nullptr));
  EXPECT_TRUE(counter.WaitForTrims(3, absl::Seconds(60)));
}

TEST(HeapPolicyTest, TheDefaultsAreTheServersPolicy) {
  const HeapPolicyOptions defaults;
  EXPECT_EQ(defaults.max_arenas, 2);
  EXPECT_EQ(defaults.trim_period, 1000ms);
  EXPECT_FALSE(defaults.trim) << "null: glibc's malloc_trim(0)";
}

}  // namespace
}  // namespace memfleet::server
