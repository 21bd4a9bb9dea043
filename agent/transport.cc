#include "agent/transport.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "agent/agent_log.h"
#include "agent/clock.h"
#include "agent/resident_pages.h"
#include "proto/capture_codec.h"
#include "proto/capture_digest.h"

namespace memfleet::agent {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr char kStopping[] = "agent stopping";

std::string SecondsText(std::chrono::milliseconds d) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%.2f s", static_cast<double>(d.count()) / 1000.0);
  return buf;
}

std::string MegabytesText(uint64_t bytes) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%.1f MB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

int ClampMs(std::chrono::milliseconds d) { return static_cast<int>(std::clamp<int64_t>(d.count(), 1, 1 << 30)); }

// A fresh channel per attempt, with its own subchannel: the reconnect timing is then this transport's
// backoff, not gRPC's (which grows to two minutes and is shared process-wide by default).
std::shared_ptr<grpc::Channel> MakeChannel(const TransportOptions& o, const std::string& target) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, ClampMs(o.backoff.initial));
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, ClampMs(o.backoff.initial));
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, ClampMs(o.backoff.max));
  return grpc::CreateCustomChannel(target, ChannelCredentials(o.tls), args);
}

}  // namespace

std::shared_ptr<grpc::ChannelCredentials> ChannelCredentials(const TransportTls& tls) {
  if (tls.ca_cert_pem.empty()) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = tls.ca_cert_pem;
  ssl.pem_cert_chain = tls.client_cert_pem;
  ssl.pem_private_key = tls.client_key_pem;
  return grpc::SslCredentials(ssl);
}

// Bookkeeping of one session, owned by the transport thread.
struct Transport::SessionState {
  uint64_t hello_dropped = 0;
  std::map<std::string, SteadyClock::time_point> in_flight;  // capture id -> when its End was written
  std::set<std::string> sent;                                // sent in this session (not to be resent)
  std::map<std::string, SteadyClock::time_point> retry_at;   // rejected with retry: resend then
  uint64_t dropped_in_flight = 0;                            // reported in a DroppedReport, not yet confirmed
};

Transport::Transport(TransportOptions options, Spool& spool, TransportEvents& events)
    : options_(std::move(options)), spool_(spool), events_(events), interval_(options_.interval) {}

Transport::~Transport() { Stop(); }

void Transport::Start() {
  absl::MutexLock lock(&mu_);
  if (started_ || stop_) return;
  started_ = true;
  thread_ = std::thread([this] { Run(); });
}

void Transport::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (!stop_) {
      stop_ = true;
      stop_requested_at_ = SteadyClock::now();
    }
    cv_.SignalAll();
  }
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void Transport::CaptureSpooled(const std::string& /*capture_id*/) {
  absl::MutexLock lock(&mu_);
  wake_ = true;
  cv_.SignalAll();
}

void Transport::CommandFailed(const std::string& sweep_id, const std::string& message) {
  v1::AgentMessage msg;
  msg.mutable_command_failed()->set_sweep_id(sweep_id);
  msg.mutable_command_failed()->set_message(message);
  absl::MutexLock lock(&mu_);
  // Only the current session's sweeps care; an old failure is not worth queueing across reconnects.
  if (connected_) outgoing_.push_back(std::move(msg));
  cv_.SignalAll();
}

bool Transport::connected() const {
  absl::MutexLock lock(&mu_);
  return connected_;
}

uint64_t Transport::sessions() const {
  absl::MutexLock lock(&mu_);
  return sessions_;
}

uint64_t Transport::failed_connects() const {
  absl::MutexLock lock(&mu_);
  return failed_connects_;
}

bool Transport::stopping() const {
  absl::MutexLock lock(&mu_);
  return stop_;
}

void Transport::Run() {
  std::random_device seed_source;
  Backoff backoff(options_.backoff, (static_cast<uint64_t>(seed_source()) << 32) ^
                                        static_cast<uint64_t>(SteadyClock::now().time_since_epoch().count()));
  const size_t server_count = options_.servers.size();
  if (server_count == 0) {
    LogLine("no server to connect to");
    return;
  }
  size_t next_server = 0;
  // Servers refused since the last session or wait: with several, the next is tried at once, and the
  // backoff waits only once each has been tried, so a dead first server costs one refused connect.
  size_t refused_in_row = 0;
  for (;;) {
    server_ = options_.servers[next_server];
    next_server = (next_server + 1) % server_count;
    bool welcomed = false;
    std::string why = RunSession(&welcomed);
    {
      absl::MutexLock lock(&mu_);
      connected_ = false;
      outgoing_.clear();
      if (!welcomed) ++failed_connects_;
    }
    if (welcomed) {
      events_.OnDisconnected(why);
      backoff.Reset();
    }
    refused_in_row = welcomed ? 0 : refused_in_row + 1;
    if (stopping()) {
      if (welcomed) LogLine(absl::StrCat("disconnected from ", server_, " (", why, ")"));
      return;
    }
    if (!welcomed && refused_in_row < server_count) {
      LogLine(absl::StrCat("cannot connect to ", server_, ": ", why, "; trying ", options_.servers[next_server]));
      continue;
    }
    refused_in_row = 0;
    std::chrono::milliseconds delay = backoff.Next();
    LogLine(absl::StrCat(welcomed ? "disconnected from " : "cannot connect to ", server_, ": ", why, "; ",
                         server_count > 1 ? absl::StrCat("trying ", options_.servers[next_server]) : "retrying", " in ",
                         SecondsText(delay)));
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(absl::Condition(&stop_), absl::FromChrono(delay));
    if (stop_) return;
  }
}

std::string Transport::RunSession(bool* welcomed) {
  std::shared_ptr<grpc::Channel> channel = MakeChannel(options_, server_);
  auto connect_deadline = SteadyClock::now() + options_.connect_timeout;
  grpc_connectivity_state state = channel->GetState(/*try_to_connect=*/true);
  while (state != GRPC_CHANNEL_READY) {
    if (state == GRPC_CHANNEL_TRANSIENT_FAILURE) return "server unreachable";
    if (state == GRPC_CHANNEL_SHUTDOWN) return "channel shut down";
    if (stopping()) return kStopping;
    if (SteadyClock::now() >= connect_deadline) {
      return absl::StrCat("no connection within ", SecondsText(options_.connect_timeout));
    }
    // Short slices so that Stop() is never kept waiting by a slow connect.
    channel->WaitForStateChange(state, std::chrono::system_clock::now() + std::chrono::milliseconds(100));
    state = channel->GetState(true);
  }

  std::unique_ptr<v1::AgentService::Stub> stub = v1::AgentService::NewStub(channel);
  grpc::ClientContext context;
  context.set_compression_algorithm(GRPC_COMPRESS_GZIP);
  if (!options_.token.empty()) context.AddMetadata("authorization", absl::StrCat("Bearer ", options_.token));
  {
    absl::MutexLock lock(&mu_);
    if (stop_) return kStopping;
    incoming_.clear();
    reader_done_ = false;
    session_over_ = false;
    write_started_.reset();
    cancel_reason_.clear();
  }
  std::unique_ptr<Stream> stream = stub->Connect(&context);
  std::thread reader([this, &stream] {
    v1::ServerMessage msg;
    while (stream->Read(&msg)) {
      absl::MutexLock lock(&mu_);
      incoming_.push_back(std::move(msg));
      msg = v1::ServerMessage();
      cv_.SignalAll();
    }
    absl::MutexLock lock(&mu_);
    reader_done_ = true;
    cv_.SignalAll();
  });
  std::thread watchdog([this, &context] { Watchdog(context); });

  std::string why = Converse(*stream, welcomed);
  bool graceful = why == kStopping;
  bool ended_by_server;
  {
    absl::MutexLock lock(&mu_);
    ended_by_server = reader_done_ && cancel_reason_.empty();
  }
  if (graceful && !ended_by_server) {
    // Half-close and let the server end the call; the watchdog cancels it when shutdown's grace is over.
    stream->WritesDone();
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(&reader_done_));
  } else if (!ended_by_server) {
    context.TryCancel();
  }
  reader.join();
  {
    absl::MutexLock lock(&mu_);
    session_over_ = true;
    cv_.SignalAll();
  }
  watchdog.join();
  // The server's own status when it ended the call, so that the log says why.
  grpc::Status status = stream->Finish();
  if (!status.ok() && status.error_code() != grpc::StatusCode::CANCELLED && !status.error_message().empty()) {
    why = absl::StrCat(why, " (", status.error_message(), ")");
  }
  return why;
}

void Transport::Watchdog(grpc::ClientContext& context) {
  absl::MutexLock lock(&mu_);
  while (!session_over_) {
    auto deadline = SteadyClock::time_point::max();
    std::string reason;
    if (write_started_) {
      deadline = *write_started_ + options_.ack_timeout;
      reason = absl::StrCat("a write stalled for ", SecondsText(options_.ack_timeout));
    }
    if (stop_ && stop_requested_at_ + options_.shutdown_grace < deadline) {
      deadline = stop_requested_at_ + options_.shutdown_grace;
      reason = kStopping;
    }
    if (SteadyClock::now() >= deadline) {
      cancel_reason_ = reason;
      context.TryCancel();
      return;
    }
    if (deadline == SteadyClock::time_point::max()) {
      cv_.Wait(&mu_);
    } else {
      cv_.WaitWithTimeout(&mu_, absl::FromChrono(deadline - SteadyClock::now()));
    }
  }
}

bool Transport::Write(Stream& stream, const v1::AgentMessage& msg, bool buffer_hint) {
  {
    absl::MutexLock lock(&mu_);
    write_started_ = SteadyClock::now();
    cv_.SignalAll();
  }
  grpc::WriteOptions write_options;
  if (buffer_hint) write_options.set_buffer_hint();
  bool ok = stream.Write(msg, write_options);
  absl::MutexLock lock(&mu_);
  write_started_.reset();
  cv_.SignalAll();
  return ok;
}

std::string Transport::Converse(Stream& stream, bool* welcomed) {
  SessionState s;
  // However the session ends, what it sent and saw no ack for is the spool's again (resent, or lost if
  // a full spool deleted it meanwhile).
  absl::Cleanup unacked = [&] {
    for (const auto& [id, sent_at] : s.in_flight) spool_.SendFailed(id);
  };
  v1::AgentMessage hello_msg;
  v1::Hello* hello = hello_msg.mutable_hello();
  *hello->mutable_device() = options_.device;
  hello->set_token(options_.token);
  hello->set_spooled_captures(spool_.count());
  s.hello_dropped = spool_.dropped();
  hello->set_dropped_captures(s.hello_dropped);
  // The wall clock, not the capture clock a test may fake: the server compares it with its own.
  hello->set_agent_time(FormatRfc3339(std::chrono::system_clock::now()));
  if (!Write(stream, hello_msg, false)) return "the stream broke while sending Hello";
  auto welcome_deadline = SteadyClock::now() + options_.ack_timeout;

  bool seen_stop = false;
  for (;;) {
    std::deque<v1::ServerMessage> messages;
    std::deque<v1::AgentMessage> outgoing;
    bool broken = false;
    std::string cancel_reason;
    {
      auto wake_at = SteadyClock::time_point::max();
      if (!*welcomed) wake_at = welcome_deadline;
      for (const auto& [id, sent_at] : s.in_flight) wake_at = std::min(wake_at, sent_at + options_.ack_timeout);
      for (const auto& [id, at] : s.retry_at) wake_at = std::min(wake_at, at);
      absl::MutexLock lock(&mu_);
      auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return (stop_ && !seen_stop) || reader_done_ || !incoming_.empty() || wake_ ||
               (*welcomed && !outgoing_.empty());
      };
      if (wake_at == SteadyClock::time_point::max()) {
        while (!ready()) cv_.Wait(&mu_);
      } else {
        const absl::Time deadline = absl::Now() + absl::FromChrono(wake_at - SteadyClock::now());
        while (!ready() && !cv_.WaitWithDeadline(&mu_, deadline)) {
        }
      }
      wake_ = false;
      messages.swap(incoming_);
      if (*welcomed) outgoing.swap(outgoing_);
      broken = reader_done_;
      cancel_reason = cancel_reason_;
      seen_stop = stop_;
    }
    for (const v1::ServerMessage& msg : messages) HandleMessage(msg, s, welcomed);
    if (broken) return cancel_reason.empty() ? "the server closed the stream" : cancel_reason;
    auto now = SteadyClock::now();
    if (!*welcomed && now >= welcome_deadline) {
      return absl::StrCat("no Welcome within ", SecondsText(options_.ack_timeout));
    }
    for (const auto& [id, sent_at] : s.in_flight) {
      if (now - sent_at >= options_.ack_timeout) {
        return absl::StrCat("no ack for capture ", id, " within ", SecondsText(options_.ack_timeout));
      }
    }
    for (const v1::AgentMessage& msg : outgoing) {
      if (!Write(stream, msg, false)) return "the stream broke while sending";
    }
    if (seen_stop) {
      // Shutting down: no new captures, only the acks of those in flight (until shutdown's grace ends).
      if (s.in_flight.empty()) return kStopping;
      continue;
    }
    for (auto it = s.retry_at.begin(); it != s.retry_at.end();) {
      if (it->second <= now) {
        s.sent.erase(it->first);
        it = s.retry_at.erase(it);
      } else {
        ++it;
      }
    }
    if (!*welcomed) continue;
    for (const Spool::Entry& entry : spool_.List()) {
      if (s.in_flight.size() >= options_.max_in_flight || stopping()) break;
      if (s.sent.count(entry.capture_id) > 0) continue;
      spool_.MarkInFlight(entry.capture_id);
      SendResult r = SendCapture(stream, entry);
      if (r != SendResult::kSent) spool_.SendFailed(entry.capture_id);
      if (r == SendResult::kWriteFailed) {
        return absl::StrCat("the stream broke while sending capture ", entry.capture_id);
      }
      if (r == SendResult::kSent) s.in_flight[entry.capture_id] = SteadyClock::now();
      s.sent.insert(entry.capture_id);
    }
    if (!ReportDrops(stream, s)) return "the stream broke while reporting dropped captures";
  }
}

bool Transport::ReportDrops(Stream& stream, SessionState& s) {
  // One report at a time; a server that does not know the message never confirms it, and the count then
  // goes in the next Hello.
  if (s.dropped_in_flight > 0) return true;
  const uint64_t dropped = spool_.dropped();
  if (dropped == 0) return true;
  v1::AgentMessage report;
  report.mutable_dropped()->set_dropped_captures(dropped);
  if (!Write(stream, report, false)) return false;
  s.dropped_in_flight = dropped;
  return true;
}

void Transport::HandleMessage(const v1::ServerMessage& msg, SessionState& s, bool* welcomed) {
  switch (msg.msg_case()) {
    case v1::ServerMessage::kWelcome: {
      if (*welcomed) return;
      *welcomed = true;
      spool_.ClearDropped(s.hello_dropped);
      {
        absl::MutexLock lock(&mu_);
        connected_ = true;
        ++sessions_;
      }
      // A Welcome's 0 leaves the interval in effect (--interval, or one the server set earlier): named as kept
      const uint32_t welcome_interval_s = msg.welcome().interval_s();
      if (welcome_interval_s != 0) interval_ = std::chrono::seconds(welcome_interval_s);
      LogLine(absl::StrCat("connected to ", server_, " as ", options_.device.device_id(), " (server ",
                           msg.welcome().server_version().empty() ? "?" : msg.welcome().server_version(),
                           welcome_interval_s == 0 ? ", keeps interval " : ", interval ", interval_.count(), " s",
                           "); spool: ", spool_.count(), " captures, ", MegabytesText(spool_.total_bytes()), ", ",
                           s.hello_dropped, " dropped reported"));
      events_.OnConnected(msg.welcome().interval_s());
      // Connected: the start-up code (TLS, HTTP/2, gRPC's set-up) will not run again.
      DropCleanCodePages();
      return;
    }
    case v1::ServerMessage::kAck: {
      const std::string& id = msg.ack().capture_id();
      s.in_flight.erase(id);
      integrity_rejections_.erase(id);
      absl::Status removed = spool_.Remove(id);
      s.sent.erase(id);
      s.retry_at.erase(id);
      LogLine(absl::StrCat("capture ", id, " acked", msg.ack().duplicate() ? " (already stored)" : "",
                           "; spool: ", spool_.count(), " captures, ", MegabytesText(spool_.total_bytes()),
                           removed.ok() ? "" : absl::StrCat(" (", removed.message(), ")")));
      events_.OnAcked(id, msg.ack().duplicate());
      // Idle until the next capture: the capture and send code need not stay mapped meanwhile.
      if (s.in_flight.empty()) DropCleanCodePages();
      return;
    }
    case v1::ServerMessage::kRejected: {
      const v1::CaptureRejected& r = msg.rejected();
      s.in_flight.erase(r.capture_id());
      if (r.retry() && r.code() == static_cast<int>(absl::StatusCode::kDataLoss) &&
          ++integrity_rejections_[r.capture_id()] > options_.max_integrity_retries) {
        // Changed on the way this many times: not the wire any more but the capture or this agent. Dropped
        // (and counted) rather than resent forever.
        integrity_rejections_.erase(r.capture_id());
        spool_.Discard(r.capture_id());
        s.sent.erase(r.capture_id());
        s.retry_at.erase(r.capture_id());
        LogLine(absl::StrCat("capture ", r.capture_id(), " failed the server's integrity check ",
                             options_.max_integrity_retries + 1, " times (", r.message(),
                             "); dropped from the spool and counted as dropped"));
        events_.OnRejected(r.capture_id(), /*retry=*/false, r.message());
        return;
      }
      if (r.retry()) {
        spool_.SendFailed(r.capture_id());
        s.retry_at[r.capture_id()] = SteadyClock::now() + options_.rejected_retry_delay;
        LogLine(absl::StrCat("capture ", r.capture_id(), " rejected for now (code ", r.code(), ": ", r.message(),
                             "); kept in the spool, resent in ", SecondsText(options_.rejected_retry_delay),
                             " or after a reconnect"));
      } else {
        absl::Status removed = spool_.Remove(r.capture_id());
        s.sent.erase(r.capture_id());
        s.retry_at.erase(r.capture_id());
        LogLine(absl::StrCat("capture ", r.capture_id(), " rejected (code ", r.code(), ": ", r.message(),
                             "); dropped from the spool",
                             removed.ok() ? "" : absl::StrCat(" (", removed.message(), ")")));
      }
      events_.OnRejected(r.capture_id(), r.retry(), r.message());
      return;
    }
    case v1::ServerMessage::kCaptureNow:
      LogLine(absl::StrCat("server asks for a capture now (sweep ", msg.capture_now().sweep_id(),
                           msg.capture_now().full_smaps() ? ", full smaps" : "", ")"));
      events_.OnCaptureNow(msg.capture_now().sweep_id(), msg.capture_now().full_smaps());
      return;
    case v1::ServerMessage::kDroppedRecorded: {
      const uint64_t n = std::min(msg.dropped_recorded().dropped_captures(), s.dropped_in_flight);
      spool_.ClearDropped(n);
      s.dropped_in_flight = 0;
      LogLine(absl::StrCat("server recorded ", n, " dropped captures"));
      return;
    }
    case v1::ServerMessage::kSetInterval:
      if (msg.set_interval().interval_s() != 0) interval_ = std::chrono::seconds(msg.set_interval().interval_s());
      LogLine(absl::StrCat("server sets the capture interval to ", msg.set_interval().interval_s(), " s"));
      events_.OnSetInterval(msg.set_interval().interval_s());
      return;
    case v1::ServerMessage::MSG_NOT_SET:
      return;
  }
}

Transport::SendResult Transport::SendCapture(Stream& stream, const Spool::Entry& entry) {
  absl::StatusOr<Spool::Loaded> loaded = spool_.Load(entry.capture_id);
  if (!loaded.ok()) {
    // NotFound: dropped from a full spool since it was listed. DataLoss: already logged and discarded.
    return SendResult::kSkipped;
  }
  absl::StatusOr<capture::Capture> capture = wire::DecodeStoredCapture(wire::kStoredCodec, loaded->blob);
  if (!capture.ok()) {
    LogLine(absl::StrCat("spooled capture ", entry.capture_id, " cannot be decoded (", capture.status().message(),
                         "); dropped"));
    spool_.Discard(entry.capture_id);
    return SendResult::kSkipped;
  }
  loaded->blob.clear();
  loaded->blob.shrink_to_fit();

  const uint64_t content_bytes = capture->ContentBytes();
  std::vector<v1::AgentMessage> messages = wire::CaptureStreamMessages(
      *capture, {entry.capture_id, loaded->entry.captured_at, loaded->entry.sweep_id}, options_.chunk_bytes);
  *capture = capture::Capture();
  const size_t chunk_count = messages.size() - 2;
  for (size_t i = 0; i + 1 < messages.size(); ++i) {
    if (!Write(stream, messages[i], /*buffer_hint=*/true)) return SendResult::kWriteFailed;
  }
  // No buffer hint on the End: it flushes the capture to the server.
  if (!Write(stream, messages.back(), false)) return SendResult::kWriteFailed;
  LogLine(absl::StrCat("capture ", entry.capture_id, " sent (", MegabytesText(content_bytes), " in ", chunk_count,
                       " chunks", entry.sweep_id.empty() ? "" : absl::StrCat(", sweep ", entry.sweep_id), ")"));
  return SendResult::kSent;
}

}  // namespace memfleet::agent
