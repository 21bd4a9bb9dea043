#include "server/worker_pool.h"

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
  std::unique_lock<std::mutex> lock(mu_);
  not_full_.wait(lock, [this] { return stopping_ || queue_.size() < max_queued_; });
  if (stopping_) return false;
  queue_.push_back(std::move(job));
  not_empty_.notify_one();
  return true;
}

bool WorkerPool::TrySubmit(std::function<void()> job) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_ || queue_.size() >= max_queued_) return false;
  queue_.push_back(std::move(job));
  not_empty_.notify_one();
  return true;
}

void WorkerPool::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  not_empty_.notify_all();
  not_full_.notify_all();  // Submit callers waiting for room give up
  std::call_once(joined_, [this] {
    for (std::thread& t : threads_) t.join();
  });
}

size_t WorkerPool::queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

void WorkerPool::Run() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      not_empty_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      // Drain before exiting: a queued job is an accepted capture whose agent waits for its ack.
      if (queue_.empty()) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    not_full_.notify_one();
    job();
  }
}

}  // namespace memfleet::server
