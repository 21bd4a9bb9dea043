// Scheduler: the agent's Boost.Asio event loop — a capture at start and then every interval, one at once
// for a server's CaptureNow (with its sweep id), SIGINT/SIGTERM for a clean shutdown, and --once (one
// capture, exit when the server acked it). Taking a capture is a plain call: CollectCapture, rewrite the
// capture.json header, spool, hand to the CaptureSink (the transport).
//
//   boost::asio::io_context io;
//   Scheduler scheduler(io, fs, clock, spool, options);
//   scheduler.set_sink(&transport);                        // transport was built with `scheduler` as events
//   scheduler.set_on_stop([&] { transport.Stop(); });
//   return scheduler.Run();                                // exit code
//
// Threads: everything runs on the thread that calls Run(); TransportEvents methods may be called from any
// thread and are posted to the loop. TakeCapture may also be called directly (tests), without Run().
#ifndef MEMFLEET_AGENT_SCHEDULER_H_
#define MEMFLEET_AGENT_SCHEDULER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "absl/status/statusor.h"
#include "agent/clock.h"
#include "capture/labels.h"
#include "agent/reader/collector.h"
#include "agent/reader/root_fs.h"
#include "agent/spool.h"
#include "agent/transport.h"

namespace memfleet::agent {

struct SchedulerOptions {
  std::string device_id;
  std::chrono::seconds interval{300};
  bool once = false;
  std::chrono::seconds once_timeout{60};
  uint64_t page_size = 4096;  // for a device root's header
  bool run_commands = true;
  // dumpsys (and getprop) run in the first capture and every dumpsys_every-th after it (--dumpsys-every).
  uint32_t dumpsys_every = 12;
  size_t max_heap_dumps = 2;  // CollectOptions (--heap-dumps-per-capture)
  // Full smaps for every process in every capture (--smaps full); else only a sweep's --full-smaps asks.
  bool full_smaps = false;
  // A device root's header fields beyond id, time and page size (HeaderFactsOf), and its Android version.
  std::vector<std::pair<std::string, std::string>> header_facts;
  std::optional<int> android_version;
  std::optional<uint64_t> ddr_size_kb;                   // live root: the header's "ddr_size_kb" (--ddr-size-kb)
  uint64_t max_capture_bytes = kDefaultMaxCaptureBytes;  // CollectOptions
  uint64_t max_node_bytes = kDefaultMaxNodeBytes;
  // The random part of this agent's capture ids (proto/capture_id.h); "" = drawn when the scheduler is
  // made, so that each agent start differs from any other agent that shares the device id.
  std::string capture_instance;
  // --label flags, checked (capture/labels.h): written into every capture's header.
  capture::Labels labels;
};

// What one capture cost, for the log (the issue asks the agent be small: it reports its own footprint).
struct TakenCapture {
  std::string capture_id;
  std::string captured_at;
  std::string sweep_id;
  size_t node_count = 0;
  uint64_t content_bytes = 0;
  uint64_t stored_bytes = 0;  // compressed, as spooled
  int64_t collect_ms = 0;     // wall time of CollectCapture
  int64_t total_ms = 0;       // wall time of collect + encode + spool
  int64_t cpu_ms = 0;         // user + system CPU of the capturing thread over the whole capture
  int64_t peak_rss_kb = 0;    // the process's peak resident set so far (getrusage ru_maxrss)
};

class Scheduler final : public TransportEvents {
 public:
  Scheduler(boost::asio::io_context& io, RootFs& fs, Clock& clock, Spool& spool, SchedulerOptions options);
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  void set_sink(CaptureSink* sink) { sink_ = sink; }
  // Called on the loop thread when the agent shuts down (closes the transport).
  void set_on_stop(std::function<void()> on_stop) { on_stop_ = std::move(on_stop); }

  // Runs the loop until a signal, RequestStop(), or (with `once`) the capture is acked or once_timeout
  // passes. Returns the exit code: 0, or 1 when a --once capture could not be taken or delivered.
  int Run();
  // Thread-safe.
  void RequestStop();

  // Collect → rewrite header → spool → sink. The error names what failed (collection, spool full, ...).
  // `full_smaps`: this capture reads full smaps for every process (a sweep's --full-smaps).
  absl::StatusOr<TakenCapture> TakeCapture(const std::string& sweep_id, bool full_smaps = false);

  std::chrono::seconds interval() const { return interval_; }

  // TransportEvents: posted to the loop.
  void OnConnected(uint32_t interval_s) override;
  void OnAcked(const std::string& capture_id, bool duplicate) override;
  void OnRejected(const std::string& capture_id, bool retry, const std::string& message) override;
  void OnCaptureNow(const std::string& sweep_id, bool full_smaps) override;
  void OnSetInterval(uint32_t interval_s) override;

 private:
  void ArmTimer();
  void SetInterval(uint32_t interval_s);
  void TakeScheduled(const std::string& sweep_id, bool full_smaps = false);
  void StartOnce();
  void Shutdown(int exit_code, const std::string& why);

  boost::asio::io_context& io_;
  RootFs& fs_;
  Clock& clock_;
  Spool& spool_;
  const SchedulerOptions options_;  // capture_instance filled in
  CaptureSink* sink_ = nullptr;
  std::function<void()> on_stop_;

  boost::asio::steady_timer timer_;
  boost::asio::steady_timer once_timer_;
  boost::asio::signal_set signals_;
  std::chrono::seconds interval_;
  uint64_t timer_generation_ = 0;  // a re-armed timer's stale handler must not take a capture
  uint64_t captures_taken_ = 0;    // since the start: picks the captures that run dumpsys
  std::string once_capture_id_;
  bool stopping_ = false;
  int exit_code_ = 0;
};

}  // namespace memfleet::agent

#endif  // MEMFLEET_AGENT_SCHEDULER_H_
