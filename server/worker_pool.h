// WorkerPool: a fixed set of threads running jobs from a bounded queue — where the server runs the engine
// and the store writes, so gRPC's stream threads only read and assemble.
//
//   WorkerPool pool(WorkerPool::Options{/*threads=*/4, /*max_queued=*/64});
//   if (!pool.Submit([&] { Ingest(capture); })) RejectAsShuttingDown();
//   pool.Shutdown();   // runs what is queued, then joins
//
// Thread-safe. Jobs must not throw. A job must not Submit to its own pool while the queue may be full
// (it would wait for itself).
#ifndef MEMFLEET_SERVER_WORKER_POOL_H_
#define MEMFLEET_SERVER_WORKER_POOL_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

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
  bool Submit(std::function<void()> job);
  // Like Submit but never waits: false when the queue is full or the pool is shutting down.
  bool TrySubmit(std::function<void()> job);

  // Stops accepting jobs, runs every job already queued, and joins the threads. Idempotent.
  void Shutdown();

  size_t threads() const { return threads_.size(); }
  size_t queued() const;

 private:
  void Run();

  const size_t max_queued_;
  mutable std::mutex mu_;
  std::condition_variable not_empty_;
  std::condition_variable not_full_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
  std::once_flag joined_;
};

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_WORKER_POOL_H_
