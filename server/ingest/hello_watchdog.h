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
// Thread-safe; one thread of its own wakes for deadlines.
#ifndef MEMFLEET_SERVER_INGEST_HELLO_WATCHDOG_H_
#define MEMFLEET_SERVER_INGEST_HELLO_WATCHDOG_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "server/core/clock.h"

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
    Wait(HelloWatchdog* owner, grpc::ServerContextBase* context, std::string host,
         std::chrono::steady_clock::time_point deadline)
        : owner_(owner), context_(context), host_(std::move(host)), deadline_(deadline) {}
    HelloWatchdog* owner_;
    grpc::ServerContextBase* context_;
    std::string host_;
    std::chrono::steady_clock::time_point deadline_;
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
  void Run() ABSL_LOCKS_EXCLUDED(mu_);
  void Forget(Wait* wait) ABSL_LOCKS_EXCLUDED(mu_);

  const HelloWatchdogOptions options_;
  SteadyClock& clock_;
  mutable absl::Mutex mu_;
  absl::CondVar cv_;
  std::multimap<std::chrono::steady_clock::time_point, Wait*> by_deadline_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, size_t> per_host_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_INGEST_HELLO_WATCHDOG_H_
