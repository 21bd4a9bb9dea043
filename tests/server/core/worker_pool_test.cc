#include "server/core/worker_pool.h"

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace memfleet::server {
namespace {

using namespace std::chrono_literals;

// A gate jobs wait on, so a test controls when the pool's threads are busy.
class Gate {
 public:
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return open_; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

// Submits a job that waits on `gate` and returns once it runs: the pool's one thread is then busy.
bool HoldTheOnlyThread(WorkerPool& pool, Gate& gate) {
  // Shared: set_value may still be running when the wait returns.
  auto started = std::make_shared<std::promise<void>>();
  std::future<void> running = started->get_future();
  if (!pool.Submit([started, &gate] {
        started->set_value();
        gate.Wait();
      })) {
    return false;
  }
  running.wait();
  return true;
}

TEST(WorkerPoolTest, RunsEveryJobOnItsOwnThreadsNotTheCallers) {
  WorkerPool pool(WorkerPool::Options{3, 100});
  EXPECT_EQ(pool.threads(), 3u);
  std::mutex mu;
  std::set<std::thread::id> ids;
  std::atomic<int> ran{0};
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(pool.Submit([&] {
      std::lock_guard<std::mutex> lock(mu);
      ids.insert(std::this_thread::get_id());
      ++ran;
    }));
  }
  pool.Shutdown();
  EXPECT_EQ(ran.load(), 50);
  EXPECT_EQ(ids.count(std::this_thread::get_id()), 0u);
  EXPECT_LE(ids.size(), 3u);
}

TEST(WorkerPoolTest, QueueIsBoundedAndTrySubmitRefusesWhenFull) {
  Gate gate;  // outlives the pool, whose threads may still be leaving Wait
  WorkerPool pool(WorkerPool::Options{1, 2});
  ASSERT_TRUE(HoldTheOnlyThread(pool, gate));  // the only thread is busy; the queue is empty
  EXPECT_TRUE(pool.TrySubmit([] {}));
  EXPECT_TRUE(pool.TrySubmit([] {}));
  EXPECT_EQ(pool.queued(), 2u);
  EXPECT_FALSE(pool.TrySubmit([] {}));  // a third waiting job exceeds max_queued
  gate.Open();
}

// An agent stream's reactor posts from gRPC's callback threads, which must never wait: Post queues past
// the bound (each stream bounds itself to one job), and the jobs still all run.
TEST(WorkerPoolTest, PostNeverWaitsEvenWhenTheQueueIsFull) {
  Gate gate;  // outlives the pool, whose threads may still be leaving Wait
  WorkerPool pool(WorkerPool::Options{1, 1});
  ASSERT_TRUE(HoldTheOnlyThread(pool, gate));
  EXPECT_TRUE(pool.TrySubmit([] {}));  // the queue is full now
  std::atomic<int> ran{0};
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(pool.Post([&ran] { ++ran; }));
  EXPECT_EQ(pool.queued(), 6u);
  EXPECT_FALSE(pool.TrySubmit([] {}));  // the bound still holds for the others
  gate.Open();
  pool.Shutdown();
  EXPECT_EQ(ran.load(), 5);
  EXPECT_FALSE(pool.Post([] {}));  // and nothing is accepted after Shutdown
}

TEST(WorkerPoolTest, SubmitWaitsForRoomInsteadOfGrowingTheQueue) {
  Gate gate;  // outlives the pool, whose threads may still be leaving Wait
  WorkerPool pool(WorkerPool::Options{1, 1});
  ASSERT_TRUE(HoldTheOnlyThread(pool, gate));
  ASSERT_TRUE(pool.Submit([] {}));  // fills the queue
  std::atomic<bool> returned{false};
  std::promise<void> submitting;
  std::thread submitter([&] {
    submitting.set_value();
    EXPECT_TRUE(pool.Submit([] {}));
    returned = true;
  });
  submitting.get_future().wait();
  // Back-pressure: however far the submitter got, the queue never grew past its bound, and the Submit
  // cannot have returned while the only worker is held and the queue is full.
  EXPECT_EQ(pool.queued(), 1u);
  EXPECT_FALSE(returned.load());
  gate.Open();
  submitter.join();
  EXPECT_TRUE(returned.load());
}

TEST(WorkerPoolTest, ShutdownRunsQueuedJobsThenRefusesNewOnes) {
  Gate gate;  // outlives the pool, whose threads may still be leaving Wait
  WorkerPool pool(WorkerPool::Options{1, 5});
  std::atomic<int> ran{0};
  ASSERT_TRUE(HoldTheOnlyThread(pool, gate));  // the queue fills and stays full
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(pool.Submit([&] { ++ran; }));
  std::thread stopper([&] { pool.Shutdown(); });
  // The queue is full until the gate opens, so this Submit can only return once Shutdown has begun:
  // refused, never run.
  EXPECT_FALSE(pool.Submit([&] { ran += 100; }));
  gate.Open();
  stopper.join();
  // Queued jobs are accepted captures whose agents wait for an ack: all of them ran.
  EXPECT_EQ(ran.load(), 5);
  EXPECT_FALSE(pool.TrySubmit([] {}));
  pool.Shutdown();  // idempotent
}

TEST(WorkerPoolTest, ShutdownReleasesASubmitterWaitingForRoom) {
  Gate gate;  // outlives the pool, whose threads may still be leaving Wait
  WorkerPool pool(WorkerPool::Options{1, 1});
  ASSERT_TRUE(HoldTheOnlyThread(pool, gate));
  ASSERT_TRUE(pool.Submit([] {}));
  std::promise<bool> result;
  std::thread submitter([&] { result.set_value(pool.Submit([] {})); });
  // Whether the submitter is already waiting or not yet, Shutdown must leave it refused, not stuck.
  std::thread stopper([&] { pool.Shutdown(); });
  std::future<bool> f = result.get_future();
  ASSERT_EQ(f.wait_for(5s), std::future_status::ready);
  EXPECT_FALSE(f.get());
  gate.Open();
  submitter.join();
  stopper.join();
}

TEST(WorkerPoolTest, UrgentJobsRunBeforeEveryQueuedOrdinaryOneInTheOrderPosted) {
  Gate gate;  // outlives the pool, whose threads may still be leaving Wait
  WorkerPool pool(WorkerPool::Options{1, 2});
  ASSERT_TRUE(HoldTheOnlyThread(pool, gate));
  std::vector<std::string> order;  // written by the pool's one thread only
  auto record = [&order](std::string name) { return [&order, name] { order.push_back(name); }; };
  ASSERT_TRUE(pool.Post(record("periodic-1")));
  ASSERT_TRUE(pool.Post(record("periodic-2")));
  ASSERT_TRUE(pool.PostUrgent(record("sweep-1")));
  ASSERT_TRUE(pool.Post(record("periodic-3")));
  ASSERT_TRUE(pool.PostUrgent(record("sweep-2")));
  EXPECT_EQ(pool.queued(), 5u);
  // Urgent jobs count toward the bound as well: the queue is over its 2.
  EXPECT_FALSE(pool.TrySubmit(record("refused")));
  gate.Open();
  pool.Shutdown();  // runs what is queued, then joins: `order` is complete
  EXPECT_EQ(order, (std::vector<std::string>{"sweep-1", "sweep-2", "periodic-1", "periodic-2", "periodic-3"}));
  EXPECT_FALSE(pool.PostUrgent(record("after shutdown")));
}

// A sweep over thousands of streams keeps urgent jobs queued for its whole length: an ordinary job waiting
// gets its turn after kUrgentRun of them.
TEST(WorkerPoolTest, AfterFourUrgentJobsInARowAWaitingOrdinaryOneRuns) {
  ASSERT_EQ(WorkerPool::kUrgentRun, 4);
  Gate gate;  // outlives the pool, whose threads may still be leaving Wait
  WorkerPool pool(WorkerPool::Options{1, 2});
  ASSERT_TRUE(HoldTheOnlyThread(pool, gate));
  std::vector<std::string> order;  // written by the pool's one thread only
  auto record = [&order](std::string name) { return [&order, name] { order.push_back(name); }; };
  ASSERT_TRUE(pool.Post(record("periodic-1")));
  ASSERT_TRUE(pool.Post(record("periodic-2")));
  for (int i = 1; i <= 9; ++i) ASSERT_TRUE(pool.PostUrgent(record("sweep-" + std::to_string(i))));
  gate.Open();
  pool.Shutdown();
  EXPECT_EQ(order, (std::vector<std::string>{"sweep-1", "sweep-2", "sweep-3", "sweep-4", "periodic-1", "sweep-5",
                                             "sweep-6", "sweep-7", "sweep-8", "periodic-2", "sweep-9"}));
}

}  // namespace
}  // namespace memfleet::server
