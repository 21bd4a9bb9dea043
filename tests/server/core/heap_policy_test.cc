// HeapPolicy's trims: once a period on the injected clock (a hand-moved one, so each assertion follows an
// Advance with no wait), none after Stop or with no period, and a Stop that does not wait for the period
// to end. Two tests run on the real clock. The trim is an injected counter: what malloc_trim hands back
// depends on the whole process's heap, not on this component. The arena limit is counted in malloc_info's
// report, in a process of its own (a death test re-run alone), as the limit binds only the arenas made
// after it and a process that already ran threads has made its own.
#include "server/core/heap_policy.h"

#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>  // defines __GLIBC__ (features.h) on glibc
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <vector>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/support/manual_clock.h"
#include "tests/support/sanitizers.h"

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

#if defined(__GLIBC__)
// The process's malloc arenas: malloc_info lists each as a <heap nr="N"> element.
int MallocArenas() {
  char* text = nullptr;
  size_t size = 0;
  FILE* out = open_memstream(&text, &size);
  if (out == nullptr) return 0;
  malloc_info(0, out);
  std::fclose(out);
  const std::string xml(text, size);
  std::free(text);
  int arenas = 0;
  for (size_t at = xml.find("<heap nr="); at != std::string::npos; at = xml.find("<heap nr=", at + 1)) ++arenas;
  return arenas;
}

// The arenas once `threads` threads have each allocated, all still alive: glibc gives a thread that first
// allocates an arena of its own while there are fewer than its limit (8 a core unless M_ARENA_MAX says).
int ArenasAfterThreadsAllocate(int threads) {
  absl::Mutex mu;
  int allocated = 0;
  bool release = false;
  std::vector<void*> blocks(threads, nullptr);
  std::vector<std::thread> running;
  for (int i = 0; i < threads; ++i) {
    running.emplace_back([&, i] {
      blocks[i] = std::malloc(4096);
      absl::MutexLock lock(&mu);
      ++allocated;
      mu.Await(absl::Condition(&release));
    });
  }
  int arenas = 0;
  {
    absl::MutexLock lock(&mu);
    auto all_allocated = [&] { return allocated == threads; };
    mu.Await(absl::Condition(&all_allocated));
    arenas = MallocArenas();
    release = true;
  }
  for (std::thread& t : running) t.join();
  for (void* block : blocks) std::free(block);
  return arenas;
}

bool ExitedWithMoreThanTwo(int status) { return WIFEXITED(status) && WEXITSTATUS(status) > 2; }

// Six threads, fewer than glibc's own limit on any machine: seven arenas without HeapPolicy's limit of two.
constexpr int kAllocatingThreads = 6;

TEST(HeapPolicyArenaTest, ThreadsStartedAfterItShareTwoArenas) {
  if (testing::kSanitizerRuntime) GTEST_SKIP() << "a sanitizer's malloc has no glibc arenas";
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a process of its own, with no arena but the main one
  EXPECT_EXIT(
      {
        HeapPolicyOptions options;
        options.trim_period = 0ms;  // no trim thread
        HeapPolicy heap(options);
        std::exit(ArenasAfterThreadsAllocate(kAllocatingThreads));
      },
      ::testing::ExitedWithCode(2), "");
}

// The control: the same threads without the limit get arenas of their own, so the count above can see them.
TEST(HeapPolicyArenaTest, WithoutTheLimitEachThreadGetsAnArenaOfItsOwn) {
  if (testing::kSanitizerRuntime) GTEST_SKIP() << "a sanitizer's malloc has no glibc arenas";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        HeapPolicyOptions options;
        options.max_arenas = 0;  // glibc's own limit
        options.trim_period = 0ms;
        HeapPolicy heap(options);
        std::exit(ArenasAfterThreadsAllocate(kAllocatingThreads));
      },
      ExitedWithMoreThanTwo, "");
}
#endif  // __GLIBC__

TEST(HeapPolicyTest, TheDefaultsAreTheServersPolicy) {
  const HeapPolicyOptions defaults;
  EXPECT_EQ(defaults.max_arenas, 2);
  EXPECT_EQ(defaults.trim_period, 1000ms);
  EXPECT_FALSE(defaults.trim) << "null: glibc's malloc_trim(0)";
}

}  // namespace
}  // namespace memfleet::server
