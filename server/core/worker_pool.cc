#include "server/core/worker_pool.h"

#include <algorithm>
#include <utility>

namespace memfleet::server {

WorkerPool::WorkerPool(Options options) : max_queued_(std::max<size_t>(options.max_queued, 1)) {
  size_t n = std::max<size_t>(options.threads, 1);
  threads_.reserve(n);
  for (size_t i = 0; i < n; ++i) threads_.emplace_back([this] { Run(); });
}

WorkerPool::~WorkerPool() { Shutdown(); }

bool WorkerPool::Submit(std::function<void()> job) {
  absl::MutexLock lock(&mu_);
  while (!stopping_ && QueuedLocked() >= max_queued_) not_full_.Wait(&mu_);
  if (stopping_) return false;
  queue_.push_back(std::move(job));
  not_empty_.Signal();
  return true;
}

bool WorkerPool::TrySubmit(std::function<void()> job) {
  absl::MutexLock lock(&mu_);
  if (stopping_ || QueuedLocked() >= max_queued_) return false;
  queue_.push_back(std::move(job));
  not_empty_.Signal();
  return true;
}

bool WorkerPool::Post(std::function<void()> job) { return Queue(false, std::move(job)); }

bool WorkerPool::PostUrgent(std::function<void()> job) { return Queue(true, std::move(job)); }

bool WorkerPool::Queue(bool urgent, std::function<void()> job) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return false;
  (urgent ? urgent_ : queue_).push_back(std::move(job));
  if (urgent) ++urgent_posted_;
  not_empty_.Signal();
  return true;
}

void WorkerPool::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  not_empty_.SignalAll();
  not_full_.SignalAll();  // Submit callers waiting for room give up
  std::call_once(joined_, [this] {
    for (std::thread& t : threads_) t.join();
  });
}

uint64_t WorkerPool::urgent_posted() const {
  absl::MutexLock lock(&mu_);
  return urgent_posted_;
}

size_t WorkerPool::queued() const {
  absl::MutexLock lock(&mu_);
  return QueuedLocked();
}

void WorkerPool::Run() {
  for (;;) {
    std::function<void()> job;
    {
      absl::MutexLock lock(&mu_);
      while (!stopping_ && QueuedLocked() == 0) not_empty_.Wait(&mu_);
      // Drain before exiting: a queued job is an accepted capture whose agent waits for its ack.
      if (QueuedLocked() == 0) return;
      const bool ordinary = urgent_.empty() || (!queue_.empty() && urgent_in_a_row_ >= kUrgentRun);
      urgent_in_a_row_ = ordinary ? 0 : urgent_in_a_row_ + 1;
      std::deque<std::function<void()>>& from = ordinary ? queue_ : urgent_;
      job = std::move(from.front());
      from.pop_front();
    }
    not_full_.Signal();
    job();
  }
}

}  // namespace memfleet::server
