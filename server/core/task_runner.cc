#include "server/core/task_runner.h"

#include <utility>

#include "absl/time/time.h"

namespace memfleet::server {

TaskRunner::TaskRunner(SteadyClock& clock) : clock_(clock) {
  thread_ = std::thread([this] { Loop(); });
  thread_id_ = thread_.get_id();
  clock_.AddListener(this);
}

TaskRunner::~TaskRunner() { Stop(); }

TaskRunner::TaskId TaskRunner::PostAt(TimePoint at, Task task) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return kNoTask;
  const TaskId id = next_id_++;
  InsertLocked(id, at, Pending{std::move(task), std::chrono::nanoseconds(0)});
  return id;
}

TaskRunner::TaskId TaskRunner::PostAfter(std::chrono::nanoseconds delay, Task task) {
  return PostAt(clock_.Now() + delay, std::move(task));
}

TaskRunner::TaskId TaskRunner::RunEvery(std::chrono::nanoseconds period, Task task, TimePoint first) {
  if (period.count() <= 0) period = std::chrono::nanoseconds(1);  // never a task that starves the others
  absl::MutexLock lock(&mu_);
  if (stopping_) return kNoTask;
  const TaskId id = next_id_++;
  InsertLocked(id, first, Pending{std::move(task), period});
  return id;
}

TaskRunner::TaskId TaskRunner::RunEvery(std::chrono::nanoseconds period, Task task) {
  return RunEvery(period, std::move(task), clock_.Now());
}

void TaskRunner::InsertLocked(TaskId id, TimePoint at, Pending pending) {
  auto it = pending_.emplace(Key{at, id}, std::move(pending)).first;
  time_of_[id] = at;
  if (it == pending_.begin()) wake_.Signal();  // the thread may sleep until a later time
}

bool TaskRunner::Cancel(TaskId id) {
  Task dropped;  // destroyed after the lock is released: its captures may post or cancel
  absl::MutexLock lock(&mu_);
  if (id != kNoTask && id == running_) {
    const bool again = running_periodic_ && !running_cancelled_;
    running_cancelled_ = true;
    return again;
  }
  auto time = time_of_.find(id);
  if (time == time_of_.end()) return false;
  auto it = pending_.find(Key{time->second, id});
  dropped = std::move(it->second.task);
  pending_.erase(it);
  time_of_.erase(time);
  return true;
}

bool TaskRunner::DueLocked() const { return !pending_.empty() && pending_.begin()->first.first <= clock_.Now(); }

void TaskRunner::Loop() {
  // Locked by hand: each task runs with mu_ released.
  mu_.Lock();
  while (!stopping_) {
    const TimePoint now = clock_.Now();
    if (pending_.empty()) {
      wake_.Wait(&mu_);
      continue;
    }
    auto first = pending_.begin();
    if (first->first.first > now) {
      wake_.WaitWithTimeout(&mu_, absl::FromChrono(first->first.first - now));
      continue;
    }
    const TaskId id = first->first.second;
    Pending task = std::move(first->second);
    pending_.erase(first);
    time_of_.erase(id);
    running_ = id;
    running_periodic_ = task.period.count() > 0;
    running_cancelled_ = false;
    mu_.Unlock();
    task.task();
    const bool again = task.period.count() > 0;
    if (!again) task.task = nullptr;  // its captures are released outside the lock
    mu_.Lock();
    running_ = kNoTask;
    if (again && !running_cancelled_ && !stopping_) {
      InsertLocked(id, now + task.period, std::move(task));
    } else if (again) {
      mu_.Unlock();
      task.task = nullptr;
      mu_.Lock();
    }
  }
  mu_.Unlock();
}

void TaskRunner::OnAdvanced() {
  absl::MutexLock lock(&mu_);
  wake_.Signal();
  // A task that moves the clock itself cannot wait for its own thread.
  if (std::this_thread::get_id() == thread_id_) return;
  auto settled = [this]()
                     ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || (running_ == kNoTask && !DueLocked()); };
  mu_.Await(absl::Condition(&settled));
}

void TaskRunner::Stop() {
  std::call_once(stopped_, [this] {
    std::map<Key, Pending> dropped;  // destroyed last, with no lock held
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
      dropped.swap(pending_);
      time_of_.clear();
      wake_.Signal();
    }
    thread_.join();
    clock_.RemoveListener(this);
  });
}

}  // namespace memfleet::server
