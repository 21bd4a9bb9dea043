// TaskRunner on a hand-moved clock (tests/support/manual_clock.h): which tasks run and in what order is
// decided by the clock alone, and Advance returns once the due ones have run, so every assertion follows
// an Advance with no wait. One test runs on the real clock.
#include "server/core/task_runner.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/manual_clock.h"
#include "tests/support/wait_for.h"

namespace memfleet::server {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;

// What the tasks did, in order, written on the runner's thread and read by the test's.
class Log {
 public:
  void Add(const std::string& what) {
    absl::MutexLock lock(&mu_);
    entries_.push_back(what);
  }
  std::vector<std::string> entries() const {
    absl::MutexLock lock(&mu_);
    return entries_;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<std::string> entries_ ABSL_GUARDED_BY(mu_);
};

TEST(TaskRunnerTest, TasksRunInTheOrderOfTheirTimesAndThoseOfOneTimeInTheOrderPosted) {
  testing::ManualSteadyClock clock;
  TaskRunner runner(clock);
  Log log;
  const auto t0 = clock.Now();
  runner.PostAt(t0 + 3s, [&] { log.Add("3s"); });
  runner.PostAt(t0 + 1s, [&] { log.Add("1s a"); });
  runner.PostAfter(2s, [&] { log.Add("2s"); });
  runner.PostAt(t0 + 1s, [&] { log.Add("1s b"); });
  clock.Advance(3s);
  EXPECT_THAT(log.entries(), ElementsAre("1s a", "1s b", "2s", "3s"));
}

TEST(TaskRunnerTest, AdvanceRunsExactlyTheTasksDueByTheNewTime) {
  testing::ManualSteadyClock clock;
  TaskRunner runner(clock);
  Log log;
  runner.PostAfter(1s, [&] { log.Add("1s"); });
  runner.PostAfter(2s, [&] { log.Add("2s"); });
  runner.PostAfter(3s, [&] { log.Add("3s"); });
  clock.Advance(2s - 1ns);
  EXPECT_THAT(log.entries(), ElementsAre("1s"));
  clock.Advance(1ns);  // 2 s: due exactly now
  EXPECT_THAT(log.entries(), ElementsAre("1s", "2s"));
  clock.Advance(999ms);
  EXPECT_THAT(log.entries(), ElementsAre("1s", "2s"));
  clock.Advance(1ms);
  EXPECT_THAT(log.entries(), ElementsAre("1s", "2s", "3s"));
}

TEST(TaskRunnerTest, APeriodicTaskRunsAtOnceThenAPeriodAfterEachRunWithoutMakingUpMissedRuns) {
  testing::ManualSteadyClock clock;
  TaskRunner runner(clock);
  std::atomic<int> runs{0};
  runner.RunEvery(10s, [&] { ++runs; });
  clock.Advance({});  // nothing moves: what is due now has run
  EXPECT_EQ(runs.load(), 1);
  clock.Advance(10s - 1ms);
  EXPECT_EQ(runs.load(), 1);
  clock.Advance(1ms);
  EXPECT_EQ(runs.load(), 2);
  // An hour in one jump is one run, not 360: the next is a period after it.
  clock.Advance(1h);
  EXPECT_EQ(runs.load(), 3);
  clock.Advance(10s);
  EXPECT_EQ(runs.load(), 4);
}

TEST(TaskRunnerTest, APeriodicTaskStartsAtTheTimeGiven) {
  testing::ManualSteadyClock clock;
  TaskRunner runner(clock);
  std::atomic<int> runs{0};
  runner.RunEvery(
      10s, [&] { ++runs; }, clock.Now() + 10s);
  clock.Advance(10s - 1ms);
  EXPECT_EQ(runs.load(), 0);
  clock.Advance(1ms);
  EXPECT_EQ(runs.load(), 1);
  clock.Advance(10s);
  EXPECT_EQ(runs.load(), 2);
}

TEST(TaskRunnerTest, ATaskPostsTasksAndTheOnesAlreadyDueRunBeforeAdvanceReturns) {
  testing::ManualSteadyClock clock;
  TaskRunner runner(clock);
  Log log;
  runner.PostAfter(1s, [&] {
    log.Add("first");
    runner.PostAt(clock.Now(), [&] { log.Add("posted, due now"); });
    runner.PostAfter(1s, [&] { log.Add("posted, a second later"); });
  });
  clock.Advance(1s);
  EXPECT_THAT(log.entries(), ElementsAre("first", "posted, due now"));
  clock.Advance(1s);
  EXPECT_THAT(log.entries(), ElementsAre("first", "posted, due now", "posted, a second later"));
}

TEST(TaskRunnerTest, ACancelledTaskNeverRuns) {
  testing::ManualSteadyClock clock;
  TaskRunner runner(clock);
  Log log;
  TaskRunner::TaskId cancelled = runner.PostAfter(1s, [&] { log.Add("cancelled"); });
  TaskRunner::TaskId kept = runner.PostAfter(1s, [&] { log.Add("kept"); });
  EXPECT_TRUE(runner.Cancel(cancelled));
  EXPECT_FALSE(runner.Cancel(cancelled));  // once
  clock.Advance(1s);
  EXPECT_THAT(log.entries(), ElementsAre("kept"));
  EXPECT_FALSE(runner.Cancel(kept));  // it ran
  EXPECT_FALSE(runner.Cancel(TaskRunner::kNoTask));
}

TEST(TaskRunnerTest, APeriodicTaskThatCancelsItselfRunsNoMore) {
  testing::ManualSteadyClock clock;
  TaskRunner runner(clock);
  std::atomic<int> runs{0};
  std::atomic<TaskRunner::TaskId> id{TaskRunner::kNoTask};
  std::atomic<bool> cancelled{false};
  // The id is set before the first run: that run is due only after the Advance below.
  id = runner.RunEvery(
      1s,
      [&] {
        if (++runs == 2) cancelled = runner.Cancel(id.load());
      },
      clock.Now() + 1s);
  clock.Advance(1s);
  clock.Advance(1s);
  EXPECT_EQ(runs.load(), 2);
  EXPECT_TRUE(cancelled.load());
  clock.Advance(1s);
  EXPECT_EQ(runs.load(), 2);
}

TEST(TaskRunnerTest, StopDropsPendingTasksUnrunAndRefusesNewOnes) {
  testing::ManualSteadyClock clock;
  auto runner = std::make_unique<TaskRunner>(clock);
  Log log;
  auto captured = std::make_shared<int>(0);  // held by the pending tasks
  runner->PostAfter(1s, [&log, captured] { log.Add("once"); });
  runner->RunEvery(
      1s, [&log, captured] { log.Add("periodic"); }, clock.Now() + 1s);
  EXPECT_EQ(captured.use_count(), 3);
  runner->Stop();
  EXPECT_EQ(captured.use_count(), 1);  // the dropped tasks were destroyed
  EXPECT_EQ(runner->PostAfter(0s, [&] { log.Add("after stop"); }), TaskRunner::kNoTask);
  EXPECT_EQ(runner->RunEvery(1s, [&] { log.Add("after stop"); }), TaskRunner::kNoTask);
  clock.Advance(1h);  // a stopped runner is no longer told, and nothing runs
  runner->Stop();     // idempotent
  runner.reset();
  clock.Advance(1h);  // nor once destroyed
  EXPECT_TRUE(log.entries().empty());
}

TEST(TaskRunnerTest, StopLetsTheRunningTaskFinishFirst) {
  testing::ManualSteadyClock clock;
  TaskRunner runner(clock);
  absl::Mutex mu;
  bool started = false;
  bool release = false;
  std::atomic<bool> finished{false};
  runner.PostAt(clock.Now(), [&] {
    absl::MutexLock lock(&mu);
    started = true;
    mu.Await(absl::Condition(&release));
    finished = true;
  });
  {
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(&started));
  }
  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    runner.Stop();
    stopped = true;
  });
  // Stop has begun once the runner refuses posts; it is still waiting for the task.
  ASSERT_TRUE(testing::WaitFor([&] { return runner.PostAfter(1h, [] {}) == TaskRunner::kNoTask; }, 30s));
  EXPECT_FALSE(stopped.load());
  {
    absl::MutexLock lock(&mu);
    release = true;
  }
  stopper.join();
  EXPECT_TRUE(finished.load());
}

TEST(TaskRunnerTest, TasksRunOnTheRunnersThreadOnTheRealClock) {
  TaskRunner runner(RealSteadyClock());
  std::atomic<bool> ran{false};
  std::thread::id ran_on;
  const auto posted = std::chrono::steady_clock::now();
  std::atomic<std::chrono::steady_clock::time_point::rep> ran_at{0};
  runner.PostAfter(20ms, [&] {
    ran_on = std::this_thread::get_id();
    ran_at = std::chrono::steady_clock::now().time_since_epoch().count();
    ran = true;
  });
  ASSERT_TRUE(testing::WaitFor([&] { return ran.load(); }, 30s));
  EXPECT_NE(ran_on, std::this_thread::get_id());
  EXPECT_GE(std::chrono::steady_clock::duration(ran_at.load()), posted.time_since_epoch() + 20ms);
}

}  // namespace
}  // namespace memfleet::server
