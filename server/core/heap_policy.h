// HeapPolicy: how the server's malloc heap stays bounded under thousands of agent streams — at most two
// glibc arenas, and the free pages inside them handed back to the kernel once a second, so the resident
// heap follows the bytes in use instead of the highest point a sweep once reached (docs/performance.md,
// "Memory"). LabServer starts one before its other threads and stops it with them.
//
//   HeapPolicy heap(HeapPolicyOptions{});   // two arenas; malloc_trim(0) every second on its own thread
//   heap.Stop();                            // a trim in progress finishes; none starts after
//
// Why both: glibc gives each thread that allocates an arena of its own (up to 8 a core) and a capture passes
// between threads (gRPC's reads it, a worker accounts it, the writer stores it); at 5,000 agents and a
// sweep the heap held 2.0x the bytes in use with an arena a thread, 1.5x with two; trimmed besides, 1.05x.
// The arena limit is process-wide and binds only the arenas created after it, hence its place before the
// server's threads start. Without glibc both are no-ops (an injected trim function still runs).
//
// Thread-safe. The trims run on a TaskRunner (server/core/task_runner.h) on the injected clock, so a test
// moves a ManualSteadyClock and counts the trims of an injected function.
#ifndef MEMFLEET_SERVER_CORE_HEAP_POLICY_H_
#define MEMFLEET_SERVER_CORE_HEAP_POLICY_H_

#include <chrono>
#include <functional>
#include <memory>

#include "server/core/clock.h"
#include "server/core/task_runner.h"

namespace memfleet::server {

struct HeapPolicyOptions {
  int max_arenas = 2;                           // glibc's M_ARENA_MAX; 0 leaves glibc's own limit
  std::chrono::milliseconds trim_period{1000};  // the first trim a period after the start; 0: never trimmed
  std::function<void()> trim;                   // null: malloc_trim(0)
  SteadyClock* clock = nullptr;                 // the period is measured on it; null: the real one
};

class HeapPolicy {
 public:
  explicit HeapPolicy(HeapPolicyOptions options);
  HeapPolicy(const HeapPolicy&) = delete;
  HeapPolicy& operator=(const HeapPolicy&) = delete;
  ~HeapPolicy();  // Stop()

  // Waits for a trim in progress, then no trim runs again; returns without waiting for a period to end.
  // Idempotent. The arena limit stays: it is the process's.
  void Stop();

 private:
  const std::function<void()> trim_;
  std::unique_ptr<TaskRunner> runner_;  // last: started after everything its task uses; null: no trims
};

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_CORE_HEAP_POLICY_H_
