// HelloWatchdog: bounds agent streams that have not said Hello yet. Until its Hello a stream is nobody
// (no device id; on loopback no token either) yet it holds the server's memory for its call, so a peer
// that opens streams and stays silent could pile them up without limit. Each waiting stream is cancelled when its
// deadline passes, and at most `max_waiting_per_host` (one host) and `max_waiting` (all hosts) streams
// may wait at once; more are refused at once with RESOURCE_EXHAUSTED.
//
//   absl::StatusOr<std::unique_ptr<HelloWatchdog::Wait>> wait = watchdog.Watch(context);  // before Read
//   reactor->StartRead(&hello);      // its OnReadDone comes with the Hello, or with false once cancelled
//   if ((*wait)->timed_out()) ...;   // the watchdog cancelled the call
//   wait->reset();                   // the Hello arrived: no longer watched
//
// Thread-safe. Each deadline is a task on its TaskRunner (server/core/task_runner.h), cancelled when the
// stream says Hello first.
#ifndef MEMFLEET_SERVER_INGEST_HELLO_WATCHDOG_H_
#define MEMFLEET_SERVER_INGEST_HELLO_WATCHDOG_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "server/core/clock.h"
#include "server/core/task_runner.h"

namespace memfleet::server {

struct HelloWatchdogOptions {
  std::chrono::milliseconds hello_timeout{10000};
  size_t max_waiting = 1024;          // streams waiting for their Hello, all peers together
  size_t max_waiting_per_host = 256;  // from one host (the peer address; a farm behind one NAT is one host)
  SteadyClock* clock = nullptr;       // deadlines are measured on it; null: RealSteadyClock()
};

class HelloWatchdog {
 public:
  explicit HelloWatchdog(HelloWatchdogOptions options);
  ~HelloWatchdog();
  HelloWatchdog(const HelloWatchdog&) = delete;
  HelloWatchdog& operator=(const HelloWatchdog&) = delete;

  class Wait {
   public:
    ~Wait();
    Wait(const Wait&) = delete;
    Wait& operator=(const Wait&) = delete;
    bool timed_out() const { return timed_out_.load(); }

   private:
    friend class HelloWatchdog;
    Wait(HelloWatchdog* owner, grpc::ServerContextBase* context, std::string host, uint64_t serial)
        : owner_(owner), context_(context), host_(std::move(host)), serial_(serial) {}
    HelloWatchdog* owner_;
    grpc::ServerContextBase* context_;
    std::string host_;
    const uint64_t serial_;  // its key in waiting_, never reused
    std::atomic<bool> timed_out_{false};
  };

  // Watches the call until the returned Wait is destroyed. ResourceExhausted when too many streams
  // wait already (from this host, or at all).
  absl::StatusOr<std::unique_ptr<Wait>> Watch(grpc::ServerContextBase* context);

  size_t waiting() const ABSL_LOCKS_EXCLUDED(mu_);
  const HelloWatchdogOptions& options() const { return options_; }

  // "ipv4:10.0.0.7:51234" -> "ipv4:10.0.0.7"; "ipv6:[::1]:5000" -> "ipv6:[::1]".
  static std::string PeerHost(const std::string& peer);

 private:
  // The task at a stream's deadline: cancels its call unless its Wait is gone.
  void Expire(uint64_t serial) ABSL_LOCKS_EXCLUDED(mu_);
  void Forget(Wait* wait) ABSL_LOCKS_EXCLUDED(mu_);

  const HelloWatchdogOptions options_;
  mutable absl::Mutex mu_;
  struct Watched {
    Wait* wait;
    TaskRunner::TaskId expiry;  // the task at its deadline
  };
  // Every stream watched; one past its deadline stays, marked timed out, until its Wait is destroyed.
  std::map<uint64_t, Watched> waiting_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, size_t> per_host_ ABSL_GUARDED_BY(mu_);
  uint64_t next_serial_ ABSL_GUARDED_BY(mu_) = 0;
  TaskRunner runner_;  // last: its thread starts after everything its tasks use
};

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_INGEST_HELLO_WATCHDOG_H_
