#include "server/ingest/ingest_service.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/figure_tier.h"
#include "server/ingest/agent_reactor.h"
#include "server/ingest/agent_stream.h"
#include "server/core/clock.h"
#include "server/core/grpc_status.h"
#include "server/core/validation.h"

namespace memfleet::server {
namespace {

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
                          {"agent_version", d.agent_version(), 256},
                          {"manufacturer", d.manufacturer(), 256},
                          {"build_type", d.build_type(), 64},
                          {"abi", d.abi(), 64},
                          {"android_sdk", d.android_sdk(), 16},
                          {"access", d.access(), 16},
                          {"selinux", d.selinux(), 16},
                          {"tier", d.tier(), 16}};
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

// The device as its Hello describes it. The platform stays "": the store keeps the one of the latest
// report.
storage::DeviceRecord DeviceOfHello(const v1::Hello& hello, const std::string& now) {
  const v1::DeviceInfo& info = hello.device();
  storage::DeviceRecord device;
  device.device_id = info.device_id();
  device.model = info.model();
  device.soc = info.soc();
  device.build_fingerprint = info.build_fingerprint();
  device.kernel = info.kernel();
  device.agent_version = info.agent_version();
  device.page_size = info.page_size();
  device.manufacturer = info.manufacturer();
  device.build_type = info.build_type();
  device.abi = info.abi();
  device.android_sdk = info.android_sdk();
  device.access = info.access();
  device.selinux = info.selinux();
  // A name this server does not know (a newer agent's) is not a tier it can show: unknown.
  if (info.tier() == kTierKernel || info.tier() == kTierDumpsys) device.agent_tier = info.tier();
  device.last_seen_at = now;
  // Recorded before the Welcome, on which the agent forgets the count: a loss is never silent. A Welcome
  // lost after this counts the drops twice, which overstates a loss rather than hiding one.
  device.dropped_captures = hello.dropped_captures();
  // CheckHello took the time, so only an empty one (an older agent) leaves the skew unknown.
  if (absl::StatusOr<std::string> agent_time = CheckOptionalTime("agent_time", hello.agent_time());
      agent_time.ok() && !agent_time->empty()) {
    device.clock_skew_s = ClockSkewSeconds(*agent_time, now);
  }
  return device;
}

}  // namespace

IngestService::IngestService(storage::CaptureStore& store, AgentRegistry& registry, WorkerPool& pool,
                             SweepCoordinator* sweeps, const security::Authorizer& authorizer, IngestOptions options)
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
      writer_(store, ingestor_, options_.writer),
      hello_watchdog_(options_.hello) {
  if (options_.token_recheck.count() > 0) {
    recheck_runner_ = std::make_unique<TaskRunner>(
        options_.token_recheck_clock != nullptr ? *options_.token_recheck_clock : RealSteadyClock());
    recheck_runner_->RunEvery(
        options_.token_recheck, [this] { RecheckTokens(); }, recheck_runner_->clock().Now() + options_.token_recheck);
  }
}

IngestService::~IngestService() {
  if (recheck_runner_ != nullptr) recheck_runner_->Stop();
}

void IngestService::RecheckTokens() {
  std::vector<Watched> now;
  {
    absl::MutexLock lock(&watched_mu_);
    for (const auto& [key, w] : watched_) now.push_back(w);
  }
  // The store is read without the lock: a stream may start or end meanwhile.
  for (const Watched& w : now) {
    absl::Status valid = authorizer_.StillValid(w.principal);
    std::shared_ptr<AgentSession> session = w.session.lock();
    if (valid.ok() || session == nullptr) continue;
    LogLine(absl::StrCat("agent ", session->device_id(), ": token \"", w.principal.token_name, "\" no longer valid (",
                         valid.message(), "); its stream is cancelled"));
    session->Cancel();
  }
}

void IngestService::WatchTokenOf(const security::Principal& principal, const std::shared_ptr<AgentSession>& session) {
  if (!principal.authenticated || recheck_runner_ == nullptr) return;
  absl::MutexLock lock(&watched_mu_);
  watched_[session.get()] = Watched{principal, session};
}

void IngestService::Unwatch(const AgentSession* session) {
  absl::MutexLock lock(&watched_mu_);
  watched_.erase(session);
}

grpc::ServerBidiReactor<v1::AgentMessage, v1::ServerMessage>* IngestService::Connect(
    grpc::CallbackServerContext* context) {
  return new Reactor(*this, context);  // deletes itself when the call is done
}

absl::StatusOr<security::Principal> IngestService::Authorize(grpc::CallbackServerContext* context) {
  security::Principal principal;
  if (grpc::Status denied =
          security::AuthorizeCall(authorizer_, context, "/memfleet.v1.AgentService/Connect", &principal);
      !denied.ok()) {
    LogLine(absl::StrCat("agent stream from ", context->peer(), " refused: ", denied.error_message()));
    return absl::Status(static_cast<absl::StatusCode>(denied.error_code()), denied.error_message());
  }
  return principal;
}

// Counted before the Hello: a stream waiting for its Hello holds server memory too. Only tokens are
// limited; without auth (loopback) the registry's one stream per device id is the bound.
absl::StatusOr<std::unique_ptr<security::AgentLimits::StreamLease>> IngestService::LeaseStream(
    const security::Principal& principal, grpc::CallbackServerContext* context) {
  if (options_.agent_limits == nullptr || !principal.authenticated) {
    return std::unique_ptr<security::AgentLimits::StreamLease>();
  }
  absl::StatusOr<std::unique_ptr<security::AgentLimits::StreamLease>> lease = options_.agent_limits->OpenStream(
      absl::StrCat("token:", principal.token_name), absl::StrCat("token \"", principal.token_name, "\""));
  if (!lease.ok()) {
    LogLine(absl::StrCat("agent stream from ", context->peer(), " refused: ", lease.status().message()));
    return absl::ResourceExhaustedError(lease.status().message());
  }
  return lease;
}

absl::StatusOr<v1::Hello> IngestService::CheckedHello(bool read, v1::AgentMessage message, bool timed_out,
                                                      const std::string& peer) {
  if (timed_out) {
    const std::string why = absl::StrCat("no Hello within ", hello_watchdog_.options().hello_timeout.count(), " ms");
    LogLine(absl::StrCat("agent stream from ", peer, " cancelled: ", why));
    return absl::DeadlineExceededError(why);
  }
  if (!read) return absl::InvalidArgumentError("the stream ended before its Hello");
  if (message.msg_case() != v1::AgentMessage::kHello) {
    return absl::InvalidArgumentError("the first message of an agent stream must be Hello");
  }
  if (absl::Status s = CheckHello(message.hello()); !s.ok()) return s;
  return std::move(*message.mutable_hello());
}

absl::StatusOr<IngestService::OpenedSession> IngestService::OpenSession(const security::Principal& principal,
                                                                        const v1::Hello& hello, const std::string& peer,
                                                                        std::unique_ptr<MessageSink> sink) {
  const v1::DeviceInfo& info = hello.device();
  const std::string& device_id = info.device_id();
  // Checked before anything is recorded: a token speaks for one device only.
  if (principal.authenticated && principal.device_id != device_id) {
    LogLine(absl::StrCat("agent stream from ", peer, " refused: token \"", principal.token_name, "\" is for device ",
                         principal.device_id, ", not ", device_id));
    return absl::PermissionDeniedError(absl::StrCat("token \"", principal.token_name, "\" is for device \"",
                                                    principal.device_id, "\"; it cannot send captures as device \"",
                                                    device_id, "\""));
  }
  const std::string now = options_.now();
  // Registered before the device is recorded: a Hello refused as another device's must not overwrite
  // the live device's facts.
  auto session = std::make_shared<AgentSession>(info, now, std::move(sink));
  absl::StatusOr<std::shared_ptr<AgentSession>> replaced = registry_.Register(session);
  if (!replaced.ok()) {
    LogLine(absl::StrCat("agent stream from ", peer, " refused: ", replaced.status().message()));
    return absl::AlreadyExistsError(replaced.status().message());
  }
  storage::DeviceRecord device = DeviceOfHello(hello, now);
  if (absl::Status s = store_.UpsertDevice(device); !s.ok()) {
    registry_.Unregister(session);
    session->Close();
    LogLine(absl::StrCat("agent ", device_id, " refused: cannot record the device: ", s.message()));
    return absl::UnavailableError(absl::StrCat("the server cannot record the device: ", s.message()));
  }
  LogLine(absl::StrCat("agent ", device_id, " connected from ", peer, " (", hello.spooled_captures(), " spooled, ",
                       hello.dropped_captures(), " dropped)",
                       *replaced != nullptr ? "; it replaces the device's older stream" : ""));
  return OpenedSession{std::move(session), std::move(device)};
}

IngestService::Load IngestService::load() const {
  Load l;
  if (options_.inflight != nullptr) {
    l.inflight_bytes = options_.inflight->used_bytes();
    l.inflight_capacity_bytes = options_.inflight->capacity_bytes();
    l.streams_waiting_for_room = options_.inflight->waiting();
  }
  l.capture_commits = writer_.stats().transactions;
  return l;
}

v1::ServerMessage IngestService::Welcome() const {
  v1::ServerMessage welcome;
  welcome.mutable_welcome()->set_interval_s(options_.welcome_interval_s);
  welcome.mutable_welcome()->set_server_version(options_.server_version);
  return welcome;
}

}  // namespace memfleet::server
