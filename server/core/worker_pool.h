// WorkerPool: a fixed set of threads running jobs from a bounded queue — where the server runs the engine,
// the store writes and every agent stream's steps, so gRPC's callback threads never wait.
//
//   WorkerPool pool(WorkerPool::Options{/*threads=*/4, /*max_queued=*/64});
//   if (!pool.Submit([&] { Ingest(capture); })) RejectAsShuttingDown();
//   pool.Shutdown();   // runs what is queued, then joins
//
// Thread-safe. Jobs must not throw. A job must not Submit to its own pool while the queue may be full
// (it would wait for itself).
#ifndef MEMFLEET_SERVER_CORE_WORKER_POOL_H_
#define MEMFLEET_SERVER_CORE_WORKER_POOL_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>  // std::once_flag
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace memfleet::server {

class WorkerPool {
 public:
  struct Options {
    size_t threads = 2;      // at least 1
    size_t max_queued = 64;  // jobs waiting (not yet running); at least 1
  };

  explicit WorkerPool(Options options);
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  ~WorkerPool();  // Shutdown()

  // Queues `job`, waiting while the queue is full (back-pressure on the caller). False, and `job` is not
  // run, once Shutdown has started.
  bool Submit(std::function<void()> job) ABSL_LOCKS_EXCLUDED(mu_);
  // Like Submit but never waits: false when the queue is full or the pool is shutting down.
  bool TrySubmit(std::function<void()> job) ABSL_LOCKS_EXCLUDED(mu_);
  // Never waits, and queues `job` even beyond max_queued: for callers that must not block (gRPC's
  // callback threads) and bound their own jobs instead (an agent stream has at most one queued at a
  // time). False, and `job` is not run, once Shutdown has started.
  bool Post(std::function<void()> job) ABSL_LOCKS_EXCLUDED(mu_);
  // Like Post, but the job runs before the queued jobs that were not themselves posted urgent (those run
  // in the order posted): for work with a deadline — a sweep's captures — that must not wait behind the
  // periodic captures of thousands of streams. Not for ever: after kUrgentRun urgent jobs in a row, one
  // ordinary job waiting runs, so the periodic captures arriving during a long sweep are not held for all
  // of it.
  bool PostUrgent(std::function<void()> job) ABSL_LOCKS_EXCLUDED(mu_);

  // Stops accepting jobs, runs every job already queued, and joins the threads. Idempotent.
  void Shutdown() ABSL_LOCKS_EXCLUDED(mu_);

  static constexpr int kUrgentRun = 4;

  size_t threads() const { return threads_.size(); }
  size_t queued() const ABSL_LOCKS_EXCLUDED(mu_);
  // Jobs PostUrgent has queued since the start: how many went ahead of the others.
  uint64_t urgent_posted() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Run() ABSL_LOCKS_EXCLUDED(mu_);
  size_t QueuedLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return urgent_.size() + queue_.size(); }
  bool Queue(bool urgent, std::function<void()> job) ABSL_LOCKS_EXCLUDED(mu_);

  const size_t max_queued_;
  mutable absl::Mutex mu_;
  absl::CondVar not_empty_;
  absl::CondVar not_full_;
  std::deque<std::function<void()>> urgent_ ABSL_GUARDED_BY(mu_);  // run first
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t urgent_posted_ ABSL_GUARDED_BY(mu_) = 0;
  int urgent_in_a_row_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::thread> threads_;
  std::once_flag joined_;
};

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_CORE_WORKER_POOL_H_
