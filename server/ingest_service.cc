#include "server/ingest_service.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "proto/capture_digest.h"
#include "server/clock.h"
#include "server/grpc_status.h"
#include "server/validation.h"

namespace memfleet::server {
namespace {

using Stream = grpc::ServerReaderWriter<v1::ServerMessage, v1::AgentMessage>;

class GrpcStreamSink : public MessageSink {
 public:
  GrpcStreamSink(grpc::ServerContext* context, Stream* stream) : context_(context), stream_(stream) {}
  bool Write(const v1::ServerMessage& message) override { return stream_->Write(message); }
  void Cancel() override { context_->TryCancel(); }

 private:
  grpc::ServerContext* context_;
  Stream* stream_;
};

// The captures of one stream still on the worker pool. The handler waits for them before it returns,
// so an agent that half-closes after its last capture still gets that capture's ack.
class PendingJobs {
 public:
  void Add() {
    std::lock_guard<std::mutex> lock(mu_);
    ++count_;
  }
  void Done() {
    std::lock_guard<std::mutex> lock(mu_);
    if (--count_ == 0) idle_.notify_all();
  }
  void WaitIdle() {
    std::unique_lock<std::mutex> lock(mu_);
    idle_.wait(lock, [this] { return count_ == 0; });
  }

 private:
  std::mutex mu_;
  std::condition_variable idle_;
  int count_ = 0;
};

absl::Status CheckHello(const v1::Hello& hello) {
  const v1::DeviceInfo& d = hello.device();
  if (absl::Status s = CheckDeviceId(d.device_id()); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("Hello: ", s.message()));
  }
  struct Field {
    const char* name;
    const std::string& value;
    size_t max_bytes;
  };
  const Field fields[] = {{"model", d.model(), 256},
                          {"soc", d.soc(), 256},
                          {"build_fingerprint", d.build_fingerprint(), kMaxNameBytes},
                          {"kernel", d.kernel(), 512},
                          {"agent_version", d.agent_version(), 256}};
  for (const Field& f : fields) {
    if (absl::Status s = CheckText(f.name, f.value, f.max_bytes); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("Hello: ", s.message()));
    }
  }
  if (absl::StatusOr<std::string> t = CheckOptionalTime("Hello: agent_time", hello.agent_time()); !t.ok()) {
    return t.status();
  }
  uint32_t page = d.page_size();
  if (page != 0 && (page < 1024 || page > (1u << 20) || (page & (page - 1)) != 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Hello: page_size ", page, " is not a power of two in [1024, 1 MiB]"));
  }
  return absl::OkStatus();
}

}  // namespace

IngestService::IngestService(storage::Store& store, AgentRegistry& registry, WorkerPool& pool, SweepCoordinator* sweeps,
                             const security::Authorizer& authorizer, IngestOptions options)
    : store_(store),
      registry_(registry),
      pool_(pool),
      sweeps_(sweeps),
      authorizer_(authorizer),
      options_([&options] {
        IngestOptions o = std::move(options);
        if (!o.now) o.now = NowRfc3339;
        return o;
      }()),
      ingestor_(store, sweeps, options_.now, options_.delta),
      hello_watchdog_(options_.hello) {
  if (options_.token_recheck.count() > 0) {
    recheck_thread_ = std::thread([this] { RecheckTokens(); });
  }
}

IngestService::~IngestService() {
  {
    std::lock_guard<std::mutex> lock(watched_mu_);
    stopping_ = true;
  }
  watched_cv_.notify_all();
  if (recheck_thread_.joinable()) recheck_thread_.join();
}

void IngestService::RecheckTokens() {
  std::unique_lock<std::mutex> lock(watched_mu_);
  while (!stopping_) {
    watched_cv_.wait_for(lock, options_.token_recheck);
    if (stopping_) break;
    std::vector<Watched> now = {};
    for (const auto& [key, w] : watched_) now.push_back(w);
    lock.unlock();
    // The store is read without the lock: a stream may start or end meanwhile.
    for (const Watched& w : now) {
      absl::Status valid = authorizer_.StillValid(w.principal);
      std::shared_ptr<AgentSession> session = w.session.lock();
      if (valid.ok() || session == nullptr) continue;
      LogLine(absl::StrCat("agent ", session->device_id(), ": token \"", w.principal.token_name, "\" no longer valid (",
                           valid.message(), "); its stream is cancelled"));
      session->Cancel();
    }
    lock.lock();
  }
}

grpc::Status IngestService::Connect(grpc::ServerContext* context, Stream* stream) {
  if (!accepting_) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is shutting down");
  security::Principal principal;
  if (grpc::Status denied =
          security::AuthorizeCall(authorizer_, context, "/memfleet.v1.AgentService/Connect", &principal);
      !denied.ok()) {
    LogLine(absl::StrCat("agent stream from ", context->peer(), " refused: ", denied.error_message()));
    return denied;
  }
  // Counted before the Hello: a stream waiting for its Hello holds a server thread too. Only tokens are
  // limited; without auth (loopback) the registry's one stream per device id is the bound.
  std::unique_ptr<security::AgentLimits::StreamLease> stream_lease;
  if (options_.agent_limits != nullptr && principal.authenticated) {
    absl::StatusOr<std::unique_ptr<security::AgentLimits::StreamLease>> lease = options_.agent_limits->OpenStream(
        absl::StrCat("token:", principal.token_name), absl::StrCat("token \"", principal.token_name, "\""));
    if (!lease.ok()) {
      LogLine(absl::StrCat("agent stream from ", context->peer(), " refused: ", lease.status().message()));
      return ToGrpcStatus(lease.status());
    }
    stream_lease = std::move(*lease);
  }
  v1::AgentMessage msg;
  {
    absl::StatusOr<std::unique_ptr<HelloWatchdog::Wait>> waiting = hello_watchdog_.Watch(context);
    if (!waiting.ok()) {
      LogLine(absl::StrCat("agent stream from ", context->peer(), " refused: ", waiting.status().message()));
      return ToGrpcStatus(waiting.status());
    }
    const std::string peer = context->peer();  // a cancelled call no longer knows it
    const bool read = stream->Read(&msg);
    if ((*waiting)->timed_out()) {
      const std::string why = absl::StrCat("no Hello within ", hello_watchdog_.options().hello_timeout.count(), " ms");
      LogLine(absl::StrCat("agent stream from ", peer, " cancelled: ", why));
      return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, why);
    }
    if (!read) return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "the stream ended before its Hello");
  }
  if (msg.msg_case() != v1::AgentMessage::kHello) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "the first message of an agent stream must be Hello");
  }
  if (absl::Status s = CheckHello(msg.hello()); !s.ok()) {
    return ToGrpcStatus(s);
  }
  const v1::DeviceInfo& info = msg.hello().device();
  const std::string device_id = info.device_id();
  // Checked before anything is recorded: a token speaks for one device only.
  if (principal.authenticated && principal.device_id != device_id) {
    LogLine(absl::StrCat("agent stream from ", context->peer(), " refused: token \"", principal.token_name,
                         "\" is for device ", principal.device_id, ", not ", device_id));
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        absl::StrCat("token \"", principal.token_name, "\" is for device \"", principal.device_id,
                                     "\"; it cannot send captures as device \"", device_id, "\""));
  }
  const std::string now = options_.now();
  // Registered before the device is recorded: a Hello refused as another device's must not overwrite
  // the live device's facts.
  auto session = std::make_shared<AgentSession>(info, now, std::make_unique<GrpcStreamSink>(context, stream));
  absl::StatusOr<std::shared_ptr<AgentSession>> replaced = registry_.Register(session);
  if (!replaced.ok()) {
    LogLine(absl::StrCat("agent stream from ", context->peer(), " refused: ", replaced.status().message()));
    return ToGrpcStatus(replaced.status());
  }
  storage::DeviceRecord device;
  device.device_id = device_id;
  device.model = info.model();
  device.soc = info.soc();
  device.build_fingerprint = info.build_fingerprint();
  device.kernel = info.kernel();
  device.agent_version = info.agent_version();
  device.page_size = info.page_size();
  device.last_seen_at = now;  // platform stays "" here: the store keeps the one of the latest report
  // Recorded before the Welcome, on which the agent forgets the count: a loss is never silent. A Welcome
  // lost after this counts the drops twice, which overstates a loss rather than hiding one.
  device.dropped_captures = msg.hello().dropped_captures();
  // CheckHello took the time, so only an empty one (an older agent) leaves the skew unknown.
  if (absl::StatusOr<std::string> agent_time = CheckOptionalTime("agent_time", msg.hello().agent_time());
      agent_time.ok() && !agent_time->empty()) {
    device.clock_skew_s = ClockSkewSeconds(*agent_time, now);
  }
  if (absl::Status s = store_.UpsertDevice(device); !s.ok()) {
    registry_.Unregister(session);
    session->Close();
    LogLine(absl::StrCat("agent ", device_id, " refused: cannot record the device: ", s.message()));
    return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                        absl::StrCat("the server cannot record the device: ", s.message()));
  }
  LogLine(absl::StrCat("agent ", device_id, " connected from ", context->peer(), " (", msg.hello().spooled_captures(),
                       " spooled, ", msg.hello().dropped_captures(), " dropped)",
                       *replaced != nullptr ? "; it replaces the device's older stream" : ""));

  auto pending = std::make_shared<PendingJobs>();
  grpc::Status result = grpc::Status::OK;
  v1::ServerMessage welcome;
  welcome.mutable_welcome()->set_interval_s(options_.welcome_interval_s);
  welcome.mutable_welcome()->set_server_version(options_.server_version);

  wire::CaptureAssembler assembler(options_.limits);
  AssembledCapture current;
  std::string skip_id;  // a rejected capture whose remaining chunks and end are dropped quietly
  auto reject = [&](absl::StatusCode code, const std::string& message, bool retry) {
    LogLine(absl::StrCat("capture ", Printable(current.capture_id), " of ", device_id, " rejected: ", message));
    if (sweeps_ != nullptr) sweeps_->OnFailed(current.sweep_id, device_id, current.capture_id, message);
    session->Write(MakeRejected(current.capture_id, code, message, retry));
    skip_id = current.capture_id;
    assembler = wire::CaptureAssembler(options_.limits);
  };
  auto violation = [&](const std::string& message) {
    result = grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, message);
  };

  // Watched for the token recheck while the stream lives (the guard also runs on every early return).
  struct Unwatch {
    IngestService* self;
    const AgentSession* key;
    ~Unwatch() {
      if (key == nullptr) return;
      std::lock_guard<std::mutex> lock(self->watched_mu_);
      self->watched_.erase(key);
    }
  } unwatch{this, nullptr};
  if (principal.authenticated && recheck_thread_.joinable()) {
    std::lock_guard<std::mutex> lock(watched_mu_);
    watched_[session.get()] = Watched{principal, session};
    unwatch.key = session.get();
  }

  if (!session->Write(welcome)) result = grpc::Status(grpc::StatusCode::CANCELLED, "stream broken");
  while (result.ok() && stream->Read(&msg)) {
    switch (msg.msg_case()) {
      case v1::AgentMessage::kBegin: {
        const v1::CaptureBegin& b = msg.begin();
        // A token revoked while its stream is open is refused at its next capture, not at reconnect.
        if (absl::Status s = authorizer_.StillValid(principal); !s.ok()) {
          result = ToGrpcStatus(s);
          break;
        }
        if (options_.agent_limits != nullptr) {
          if (absl::Status s = options_.agent_limits->CountCapture(device_id); !s.ok()) {
            current = AssembledCapture();
            current.capture_id = b.capture_id();
            reject(absl::StatusCode::kResourceExhausted, std::string(s.message()), /*retry=*/true);
            result = ToGrpcStatus(s);
            break;
          }
        }
        if (assembler.active()) {
          reject(absl::StatusCode::kAborted,
                 absl::StrCat("capture ", current.capture_id, " ended by the begin of ", Printable(b.capture_id())),
                 /*retry=*/true);
        }
        current = AssembledCapture();
        current.device_id = device_id;
        current.capture_id = b.capture_id();
        if (absl::Status s = CheckCaptureId(b.capture_id()); !s.ok()) {
          reject(absl::StatusCode::kInvalidArgument, std::string(s.message()), false);
          break;
        }
        if (absl::Status s = CheckSweepId(b.sweep_id()); !s.ok()) {
          reject(absl::StatusCode::kInvalidArgument, std::string(s.message()), false);
          break;
        }
        current.sweep_id = b.sweep_id();
        absl::StatusOr<std::string> at = CheckTime("captured_at", b.captured_at());
        if (!at.ok()) {
          reject(absl::StatusCode::kInvalidArgument, std::string(at.status().message()), false);
          break;
        }
        current.captured_at = *at;
        // Checked at the Begin, before a capture that can never be stored is assembled.
        if (absl::Status s = CheckNotAhead(current.captured_at, options_.now(), options_.max_clock_skew); !s.ok()) {
          registry_.CountFutureCapture(device_id);
          reject(s.code(), std::string(s.message()), /*retry=*/false);
          break;
        }
        if (absl::Status s = assembler.Begin(b); !s.ok()) {
          reject(s.code(), std::string(s.message()), false);
          break;
        }
        if (sweeps_ != nullptr) sweeps_->OnCapturing(current.sweep_id, device_id, current.capture_id);
        break;
      }
      case v1::AgentMessage::kChunk: {
        if (!assembler.active()) {
          if (!skip_id.empty() && msg.chunk().capture_id() == skip_id) break;
          violation(
              absl::StrCat("capture chunk of ", Printable(msg.chunk().capture_id()), " without its CaptureBegin"));
          break;
        }
        if (absl::Status s = assembler.AddChunk(msg.chunk()); !s.ok()) {
          reject(s.code(), std::string(s.message()), false);
        }
        break;
      }
      case v1::AgentMessage::kEnd: {
        if (!assembler.active()) {
          if (!skip_id.empty() && msg.end().capture_id() == skip_id) break;
          violation(absl::StrCat("capture end of ", Printable(msg.end().capture_id()), " without its CaptureBegin"));
          break;
        }
        absl::StatusOr<accounting::Capture> capture = assembler.Finish(msg.end());
        if (!capture.ok()) {
          // A digest mismatch may be the wire's: the agent keeps the capture and resends it (a bounded
          // number of times). Every other mismatch is the sender's own and would repeat.
          reject(capture.status().code(), std::string(capture.status().message()),
                 /*retry=*/wire::IsDigestMismatch(capture.status()));
          break;
        }
        current.capture = std::move(*capture);
        if (assembler.digest_missing()) {
          LogLine(absl::StrCat("capture ", current.capture_id, " of ", device_id,
                               " has no capture_sha256 (an older agent): stored unverified"));
          current.ingest_warnings.push_back(kUnverifiedCaptureWarning);
        }
        auto job = std::make_shared<AssembledCapture>(std::move(current));
        current = AssembledCapture();
        pending->Add();
        bool queued = pool_.Submit([this, session, pending, job] {
          session->Write(ingestor_.Ingest(std::move(*job)));
          pending->Done();
        });
        if (!queued) {
          pending->Done();
          current = std::move(*job);
          reject(absl::StatusCode::kUnavailable, "the server is shutting down", /*retry=*/true);
        }
        break;
      }
      case v1::AgentMessage::kCommandFailed:
        if (sweeps_ != nullptr) {
          sweeps_->OnFailed(msg.command_failed().sweep_id(), device_id, "",
                            absl::StrCat("agent: ", Printable(msg.command_failed().message(), 400)));
        }
        break;
      case v1::AgentMessage::kHello:
        violation("a second Hello on the same stream");
        break;
      case v1::AgentMessage::kDropped: {
        // Recorded as at Hello (added to the device's count) before it is confirmed: a confirmation lost
        // on the way makes the agent report the drops again, which overstates a loss rather than hides it.
        storage::DeviceRecord update = device;
        update.last_seen_at = options_.now();
        update.dropped_captures = msg.dropped().dropped_captures();
        if (absl::Status s = store_.UpsertDevice(update); !s.ok()) {
          LogLine(absl::StrCat("agent ", device_id, ": cannot record ", update.dropped_captures,
                               " dropped captures (", s.message(), "); its next Hello reports them"));
          break;
        }
        LogLine(absl::StrCat("agent ", device_id, " dropped ", update.dropped_captures, " captures from its spool"));
        v1::ServerMessage recorded;
        recorded.mutable_dropped_recorded()->set_dropped_captures(update.dropped_captures);
        session->Write(recorded);
        break;
      }
      case v1::AgentMessage::kHeartbeat:
      case v1::AgentMessage::MSG_NOT_SET:  // also a newer agent's message this server does not know
        break;
    }
  }
  if (assembler.active() && sweeps_ != nullptr) {
    sweeps_->OnFailed(current.sweep_id, device_id, current.capture_id, "the stream ended inside the capture");
  }
  pending->WaitIdle();
  registry_.Unregister(session);
  bool was_cancelled = session->cancelled() || context->IsCancelled();
  session->Close();
  LogLine(absl::StrCat("agent ", device_id, " disconnected",
                       result.ok() ? "" : absl::StrCat(": ", result.error_message()),
                       was_cancelled ? " (cancelled)" : ""));
  if (result.ok() && was_cancelled) return grpc::Status(grpc::StatusCode::CANCELLED, "stream cancelled");
  return result;
}

}  // namespace memfleet::server
