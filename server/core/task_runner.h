// TaskRunner: the server's one background-loop primitive — a thread that runs tasks at times on an
// injected SteadyClock, once (PostAt, PostAfter) or every period (RunEvery): retention runs, fleet
// heartbeats and relay polls, sweep and Hello deadlines, token rechecks. Tests give it a
// ManualSteadyClock (tests/support/manual_clock.h), whose Advance returns once every task due by the new
// time has run, so a test asserts right after it instead of waiting.
//
//   TaskRunner runner(clock);
//   runner.RunEvery(std::chrono::seconds(10), [this] { Heartbeat(); });   // now, then every 10 s
//   TaskRunner::TaskId expiry = runner.PostAfter(std::chrono::seconds(60), [this, id] { Expire(id); });
//   runner.Cancel(expiry);   // it will not run (unless it already started)
//   runner.Stop();           // the task running finishes; pending ones are dropped, never run
//
// Tasks run one at a time on the runner's thread, in the order of their times, those due at one time in
// the order posted. A task may post and cancel tasks. Thread-safe; Stop (and the destructor) must not be
// called from a task. Tasks must not throw.
#ifndef MEMFLEET_SERVER_CORE_TASK_RUNNER_H_
#define MEMFLEET_SERVER_CORE_TASK_RUNNER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>  // std::once_flag
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "server/core/clock.h"

namespace memfleet::server {

class TaskRunner final : private SteadyClock::Listener {
 public:
  using Task = std::function<void()>;
  using TimePoint = std::chrono::steady_clock::time_point;
  using TaskId = uint64_t;
  static constexpr TaskId kNoTask = 0;  // what a post after Stop returns: the task will never run

  explicit TaskRunner(SteadyClock& clock);
  TaskRunner(const TaskRunner&) = delete;
  TaskRunner& operator=(const TaskRunner&) = delete;
  ~TaskRunner();  // Stop()

  // Runs `task` once the clock reads `at` or later (at once for a time already past).
  TaskId PostAt(TimePoint at, Task task) ABSL_LOCKS_EXCLUDED(mu_);
  TaskId PostAfter(std::chrono::nanoseconds delay, Task task) ABSL_LOCKS_EXCLUDED(mu_);
  // Runs `task` at `first`, then `period` after each run began, until cancelled or stopped. A run that
  // takes longer than the period, or a clock that jumps further, delays the next run; missed runs are not
  // made up. `period` must be positive.
  TaskId RunEvery(std::chrono::nanoseconds period, Task task, TimePoint first) ABSL_LOCKS_EXCLUDED(mu_);
  TaskId RunEvery(std::chrono::nanoseconds period, Task task) ABSL_LOCKS_EXCLUDED(mu_);

  // After it the task does not start again; a run in progress finishes. True when this call stopped it;
  // false when it had run or started already (a one-time task), was cancelled, or the runner stopped.
  bool Cancel(TaskId id) ABSL_LOCKS_EXCLUDED(mu_);

  // Waits for the task running, if any, then drops every pending task (destroyed, never run) and joins
  // the thread; later posts return kNoTask. Idempotent.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

  SteadyClock& clock() const { return clock_; }

 private:
  struct Pending {
    Task task;
    std::chrono::nanoseconds period{0};  // 0: once
  };
  using Key = std::pair<TimePoint, TaskId>;  // ids grow, so one time's tasks keep their posting order

  void InsertLocked(TaskId id, TimePoint at, Pending pending) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool DueLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Loop() ABSL_LOCKS_EXCLUDED(mu_);
  // SteadyClock::Listener: a manual clock moved; returns once what became due has run.
  void OnAdvanced() override ABSL_LOCKS_EXCLUDED(mu_);

  SteadyClock& clock_;
  mutable absl::Mutex mu_;
  absl::CondVar wake_;  // a new first task, a moved clock, or Stop
  std::map<Key, Pending> pending_ ABSL_GUARDED_BY(mu_);
  std::map<TaskId, TimePoint> time_of_ ABSL_GUARDED_BY(mu_);  // the key of each pending task
  TaskId next_id_ ABSL_GUARDED_BY(mu_) = 1;
  TaskId running_ ABSL_GUARDED_BY(mu_) = kNoTask;
  bool running_periodic_ ABSL_GUARDED_BY(mu_) = false;
  bool running_cancelled_ ABSL_GUARDED_BY(mu_) = false;  // cancelled during its run: not run again
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;         // started in the constructor, after everything it uses
  std::thread::id thread_id_;  // thread_'s, set in the constructor: join() clears thread_'s own
  std::once_flag stopped_;
};

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_CORE_TASK_RUNNER_H_
