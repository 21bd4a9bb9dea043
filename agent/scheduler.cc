#include "agent/scheduler.h"

#include <sys/resource.h>

#include <csignal>
#include <cstdio>
#include <utility>

#include <boost/asio/post.hpp>

#include "absl/strings/str_cat.h"
#include "agent/agent_log.h"
#include "agent/reader/collector.h"
#include "agent/header_rewrite.h"
#include "common/status_macros.h"
#include "proto/capture_codec.h"
#include "proto/capture_id.h"

namespace memfleet::agent {
namespace {

int64_t CpuMs(const struct rusage& r) {
  return (static_cast<int64_t>(r.ru_utime.tv_sec) + r.ru_stime.tv_sec) * 1000 +
         (static_cast<int64_t>(r.ru_utime.tv_usec) + r.ru_stime.tv_usec) / 1000;
}

std::string Megabytes(uint64_t bytes) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%.2f MB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

int64_t ElapsedMs(std::chrono::steady_clock::time_point from, std::chrono::steady_clock::time_point to) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(to - from).count();
}

// Nodes the caps kept out of the capture are error nodes in it; the log says how many, once.
void LogCapNodes(const capture::Capture& capture) {
  size_t full = 0, too_big = 0;
  for (const auto& [path, node] : capture.nodes()) {
    if (!node.is_error()) continue;
    if (node.content == kCaptureFullErrno) ++full;
    if (node.content == "EFBIG") ++too_big;
  }
  if (full > 0) {
    LogLine(absl::StrCat("capture reached --max-capture-mb: ", full, " nodes recorded as ", kCaptureFullErrno,
                         " instead of read"));
  }
  if (too_big > 0) LogLine(absl::StrCat(too_big, " nodes over --max-node-mb recorded as EFBIG"));
}

// A failed draw leaves it empty: every capture then fails, naming the instance, rather than reusing ids.
SchedulerOptions WithCaptureInstance(SchedulerOptions options) {
  if (options.capture_instance.empty()) {
    absl::StatusOr<std::string> instance = wire::NewCaptureInstance();
    if (instance.ok()) {
      options.capture_instance = *std::move(instance);
    } else {
      LogLine(std::string(instance.status().message()));
    }
  }
  return options;
}

}  // namespace

Scheduler::Scheduler(boost::asio::io_context& io, RootFs& fs, Clock& clock, Spool& spool, SchedulerOptions options)
    : io_(io),
      fs_(fs),
      clock_(clock),
      spool_(spool),
      options_(WithCaptureInstance(std::move(options))),
      timer_(io),
      once_timer_(io),
      signals_(io),
      interval_(options_.interval.count() > 0 ? options_.interval : std::chrono::seconds(300)) {}

int Scheduler::Run() {
  boost::system::error_code ec;
  signals_.add(SIGINT, ec);
  signals_.add(SIGTERM, ec);
  signals_.async_wait([this](const boost::system::error_code& error, int signal_number) {
    // An interrupted --once run has not delivered its capture: that is a failure for a script.
    if (!error) Shutdown(options_.once ? 1 : 0, absl::StrCat("signal ", signal_number, " received"));
  });
  if (options_.once) {
    boost::asio::post(io_, [this] { StartOnce(); });
  } else {
    boost::asio::post(io_, [this] {
      TakeScheduled("");
      ArmTimer();
    });
  }
  io_.run();
  return exit_code_;
}

void Scheduler::RequestStop() {
  boost::asio::post(io_, [this] { Shutdown(exit_code_, "stop requested"); });
}

void Scheduler::Shutdown(int exit_code, const std::string& why) {
  if (stopping_) return;
  stopping_ = true;
  exit_code_ = exit_code;
  LogLine(absl::StrCat("shutting down: ", why, "; spool: ", spool_.count(), " captures, ",
                       Megabytes(spool_.total_bytes()), " in ", spool_.dir()));
  timer_.cancel();
  once_timer_.cancel();
  boost::system::error_code ec;
  signals_.cancel(ec);
  if (on_stop_) on_stop_();
}

void Scheduler::ArmTimer() {
  if (stopping_) return;
  uint64_t generation = ++timer_generation_;
  timer_.expires_after(interval_);
  timer_.async_wait([this, generation](const boost::system::error_code& ec) {
    if (ec || stopping_ || generation != timer_generation_) return;
    TakeScheduled("");
    ArmTimer();
  });
}

void Scheduler::SetInterval(uint32_t interval_s) {
  if (interval_s == 0 || std::chrono::seconds(interval_s) == interval_) return;
  interval_ = std::chrono::seconds(interval_s);
  LogLine(absl::StrCat("capture interval now ", interval_s, " s"));
  if (!options_.once) ArmTimer();
}

void Scheduler::TakeScheduled(const std::string& sweep_id, bool full_smaps) {
  if (stopping_) return;
  absl::StatusOr<TakenCapture> taken = TakeCapture(sweep_id, full_smaps);
  if (taken.ok()) return;
  LogLine(absl::StrCat("capture failed: ", taken.status().message()));
  if (!sweep_id.empty() && sink_ != nullptr) sink_->CommandFailed(sweep_id, std::string(taken.status().message()));
}

void Scheduler::StartOnce() {
  absl::StatusOr<TakenCapture> taken = TakeCapture("");
  if (!taken.ok()) {
    Shutdown(1, absl::StrCat("the capture failed: ", taken.status().message()));
    return;
  }
  once_capture_id_ = taken->capture_id;
  once_timer_.expires_after(options_.once_timeout);
  once_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopping_) return;
    Shutdown(1, absl::StrCat("capture ", once_capture_id_, " was not delivered within ", options_.once_timeout.count(),
                             " s (server unreachable or not acking); it stays in the spool ", spool_.dir(),
                             " and is sent by the next agent run"));
  });
}

absl::StatusOr<TakenCapture> Scheduler::TakeCapture(const std::string& sweep_id, bool full_smaps) {
  struct rusage thread_before {};
  getrusage(RUSAGE_THREAD, &thread_before);
  auto start = clock_.SteadyNow();

  TakenCapture taken;
  taken.sweep_id = sweep_id;
  taken.captured_at = clock_.NowRfc3339();
  CollectOptions collect;
  collect.device_id = options_.device_id;
  collect.captured_at = taken.captured_at;
  collect.page_size = options_.page_size;
  collect.header_facts = options_.header_facts;
  collect.android_version = options_.android_version;
  collect.ddr_size_kb = options_.ddr_size_kb;
  collect.run_commands = options_.run_commands;
  collect.run_dumpsys = options_.dumpsys_every <= 1 || captures_taken_ % options_.dumpsys_every == 0;
  collect.max_heap_dumps = options_.max_heap_dumps;
  collect.full_smaps = options_.full_smaps || full_smaps;
  collect.heap_dump_round = captures_taken_;
  ++captures_taken_;
  collect.max_capture_bytes = options_.max_capture_bytes;
  collect.max_node_bytes = options_.max_node_bytes;
  absl::StatusOr<capture::Capture> capture = CollectCapture(fs_, collect);
  if (!capture.ok()) return capture.status();
  LogCapNodes(*capture);
  auto collected = clock_.SteadyNow();

  MEMFLEET_RETURN_IF_ERROR(RewriteCaptureHeaderOf(*capture, options_.device_id, taken.captured_at, options_.labels));
  MEMFLEET_ASSIGN_OR_RETURN(taken.capture_id, wire::MakeCaptureId(options_.device_id, taken.captured_at,
                                                                  options_.capture_instance, spool_.NextSequence()));
  taken.node_count = capture->size();
  taken.content_bytes = capture->ContentBytes();
  std::string blob = wire::EncodeStoredCapture(*capture, taken.capture_id, options_.device_id, taken.captured_at,
                                               wire::kAgentCompressionLevel);
  *capture = capture::Capture();
  if (blob.empty()) return absl::InternalError(absl::StrCat("capture ", taken.capture_id, " could not be compressed"));
  taken.stored_bytes = blob.size();
  absl::Status put = spool_.Put(taken.capture_id, taken.captured_at, sweep_id, blob);

  struct rusage thread_after {};
  getrusage(RUSAGE_THREAD, &thread_after);
  struct rusage self {};
  getrusage(RUSAGE_SELF, &self);
  auto end = clock_.SteadyNow();
  taken.collect_ms = ElapsedMs(start, collected);
  taken.total_ms = ElapsedMs(start, end);
  taken.cpu_ms = CpuMs(thread_after) - CpuMs(thread_before);
  taken.peak_rss_kb = self.ru_maxrss;  // kilobytes on Linux
  LogLine(absl::StrCat(
      "capture ", taken.capture_id, " taken", sweep_id.empty() ? "" : absl::StrCat(" for sweep ", sweep_id), ": ",
      taken.node_count, " nodes, ", Megabytes(taken.content_bytes), " (", Megabytes(taken.stored_bytes),
      " compressed), collect ", taken.collect_ms, " ms, total ", taken.total_ms, " ms, cpu ", taken.cpu_ms,
      " ms, peak rss ", Megabytes(static_cast<uint64_t>(taken.peak_rss_kb) * 1024), "; spool: ", spool_.count(),
      " captures, ", Megabytes(spool_.total_bytes()), ", ", spool_.dropped(), " dropped"));
  if (!put.ok()) return put;
  if (sink_ != nullptr) sink_->CaptureSpooled(taken.capture_id);
  return taken;
}

void Scheduler::OnConnected(uint32_t interval_s) {
  boost::asio::post(io_, [this, interval_s] {
    if (!stopping_) SetInterval(interval_s);
  });
}

void Scheduler::OnAcked(const std::string& capture_id, bool /*duplicate*/) {
  boost::asio::post(io_, [this, capture_id] {
    if (stopping_ || !options_.once || capture_id != once_capture_id_) return;
    Shutdown(0, absl::StrCat("capture ", capture_id, " delivered"));
  });
}

void Scheduler::OnRejected(const std::string& capture_id, bool retry, const std::string& message) {
  if (retry) return;
  boost::asio::post(io_, [this, capture_id, message] {
    if (stopping_ || !options_.once || capture_id != once_capture_id_) return;
    Shutdown(1, absl::StrCat("the server rejected capture ", capture_id, ": ", message));
  });
}

void Scheduler::OnCaptureNow(const std::string& sweep_id, bool full_smaps) {
  boost::asio::post(io_, [this, sweep_id, full_smaps] {
    if (stopping_) return;
    if (options_.once) {
      LogLine(absl::StrCat("ignoring the capture request of sweep ", sweep_id, ": running with --once"));
      if (sink_ != nullptr) sink_->CommandFailed(sweep_id, "agent runs with --once and takes no further captures");
      return;
    }
    TakeScheduled(sweep_id, full_smaps);
  });
}

void Scheduler::OnSetInterval(uint32_t interval_s) {
  boost::asio::post(io_, [this, interval_s] {
    if (!stopping_) SetInterval(interval_s);
  });
}

}  // namespace memfleet::agent
