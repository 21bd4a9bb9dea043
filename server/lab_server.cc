#include "server/lab_server.h"

#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/security/exposure.h"
#include "server/core/clock.h"
#include "storage/backends/open_store.h"

namespace memfleet::server {
namespace {

constexpr int kStreamWindowBytes = 16 * 1024;
constexpr int kReadChunkBytes = 8 * 1024;  // gRPC's smaller read buffer size (its larger is 64 KiB)

absl::StatusOr<std::string> ReadPem(const std::string& path, const char* flag) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  if (!in || text.str().empty()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot read ", flag, " ", path, " (a PEM file)"));
  }
  return text.str();
}

// TLS credentials when a certificate is configured, else plaintext (DecideExposure refuses plaintext
// beyond loopback unless insecure).
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeCredentials(const LabServerOptions& o) {
  if (o.tls_cert_file.empty() && o.tls_key_file.empty()) {
    if (!o.client_ca_file.empty()) {
      return absl::InvalidArgumentError("--client-ca needs --tls-cert and --tls-key (mutual TLS is TLS)");
    }
    return grpc::InsecureServerCredentials();
  }
  if (o.tls_cert_file.empty() || o.tls_key_file.empty()) {
    return absl::InvalidArgumentError("TLS needs both --tls-cert FILE and --tls-key FILE");
  }
  absl::StatusOr<std::string> cert = ReadPem(o.tls_cert_file, "--tls-cert");
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadPem(o.tls_key_file, "--tls-key");
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions ssl;
  ssl.pem_key_cert_pairs.push_back({*key, *cert});
  if (!o.client_ca_file.empty()) {
    absl::StatusOr<std::string> ca = ReadPem(o.client_ca_file, "--client-ca");
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *ca;
    // Verified when presented; the agent service then refuses a stream without one (CLI users have
    // tokens, not certificates).
    ssl.client_certificate_request = GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(ssl);
}

// Which ports check tokens (docs/security.md). Beyond loopback a port needs TLS and a valid token unless
// `insecure`; there tokens stay required even if every token is revoked later.
struct TokenRule {
  bool grpc = false;
  bool http = false;
};

absl::StatusOr<TokenRule> DecideExposure(const LabServerOptions& options, storage::TokenStore& tokens) {
  const TokenRule rule{
      !options.insecure && !security::IsLoopbackListen(options.listen),
      !options.insecure && !options.http.listen.empty() && !security::IsLoopbackListen(options.http.listen)};
  absl::StatusOr<std::vector<storage::TokenRecord>> records = tokens.ListTokens();
  if (!rule.grpc && records.ok() && records->empty()) {
    LogLine(
        "no tokens: every call is allowed without one; for one machine only (a port reversed onto phones with "
        "adb reverse is open to every app on them: docs/security.md)");
  }
  // Loopback only (or insecure): nothing to check, and a tokens table unreadable now is answered call by
  // call (UNAVAILABLE), as when it becomes unreadable later.
  if (!rule.grpc && !rule.http) return rule;
  if (!records.ok()) {
    return absl::Status(records.status().code(), absl::StrCat("cannot read the tokens: ", records.status().message()));
  }
  security::Exposure exposure;
  exposure.tls = !options.tls_cert_file.empty();
  exposure.insecure = options.insecure;
  for (const storage::TokenRecord& t : *records) exposure.tokens |= t.revoked_at.empty();
  for (const std::string& listen : {options.listen, options.http.listen}) {
    if (listen.empty()) continue;
    MEMFLEET_RETURN_IF_ERROR(security::CheckListenExposure(listen, exposure));
  }
  return rule;
}

}  // namespace

absl::StatusOr<std::unique_ptr<LabServer>> LabServer::Start(const std::string& db_path, const std::string& listen) {
  LabServerOptions options;
  options.db_path = db_path;
  options.listen = listen;
  return Start(options);
}

absl::StatusOr<std::unique_ptr<LabServer>> LabServer::Start(const LabServerOptions& options) {
  if (options.db_path.empty()) return absl::InvalidArgumentError("no database path (--db)");
  // On PostgreSQL a writer connection per worker: each stores its captures beside the others'.
  storage::OpenStoreOptions open;
  open.writers = std::max<size_t>(1, options.workers);
  absl::StatusOr<std::unique_ptr<storage::Store>> store = storage::OpenStore(options.db_path, open);
  if (!store.ok()) {
    return absl::Status(store.status().code(),
                        absl::StrCat("cannot open the database ", options.db_path, ": ", store.status().message()));
  }
  return StartWithStore(std::move(*store), options);
}

absl::StatusOr<std::unique_ptr<LabServer>> LabServer::StartWithStore(std::unique_ptr<storage::Store> store,
                                                                     const LabServerOptions& options) {
  size_t colon = options.listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == options.listen.size()) {
    return absl::InvalidArgumentError(absl::StrCat("listen address \"", options.listen, "\" is not HOST:PORT"));
  }
  MEMFLEET_ASSIGN_OR_RETURN(const TokenRule token_rule, DecideExposure(options, *store));  // before listening
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials = MakeCredentials(options);
  if (!credentials.ok()) return credentials.status();
  std::unique_ptr<LabServer> s(new LabServer());
  s->heap_ = std::make_unique<HeapPolicy>(options.heap);
  s->store_ = std::move(store);
  s->authorizer_ = std::make_unique<security::Authorizer>(
      *s->store_, security::AuthorizerOptions{token_rule.grpc, !options.client_ca_file.empty()});
  s->agent_limits_ = std::make_unique<security::AgentLimits>(options.agent_limits);
  s->shutdown_grace_ = options.shutdown_grace;
  s->pool_ = std::make_unique<WorkerPool>(WorkerPool::Options{options.workers, options.max_queued_captures});
  SweepCoordinator::Options sweep_options = options.sweeps;
  if (storage::FleetStore* fleet = s->store_->fleet(); fleet != nullptr) {
    FleetLinkOptions fleet_options = options.fleet;
    if (fleet_options.server_id.empty()) fleet_options.server_id = DefaultServerId(options.listen.substr(colon + 1));
    s->fleet_ = std::make_unique<FleetLink>(*fleet, s->registry_, std::move(fleet_options));
    s->registry_.AddListener(s->fleet_.get());
    sweep_options.relayer = s->fleet_.get();
    sweep_options.server_id = s->fleet_->server_id();
  }
  s->sweeps_ = std::make_unique<SweepCoordinator>(*s->store_, s->registry_, sweep_options);
  s->registry_.AddListener(s->sweeps_.get());
  if (s->fleet_ != nullptr) s->fleet_->Start(*s->sweeps_);
  // Before the first call: a sweep the previous process was running when it died would stay open forever.
  // The sweeps of the other servers alive on the database are theirs to finish (the heartbeat Start wrote
  // makes this server one of them for those starting after it).
  absl::StatusOr<std::set<std::string>> live_servers = std::set<std::string>();
  if (s->fleet_ != nullptr) live_servers = s->fleet_->LiveServers();
  absl::Status closing = live_servers.status();
  if (live_servers.ok()) closing = s->sweeps_->CloseInterruptedSweeps(*live_servers).status();
  if (!closing.ok() && closing.code() != absl::StatusCode::kUnimplemented) {
    LogLine(absl::StrCat("cannot close the sweeps an earlier server process left running: ", closing.message()));
  }
  IngestOptions ingest;
  ingest.welcome_interval_s = options.agent_interval_s;
  ingest.limits = options.capture_limits;
  ingest.max_clock_skew = options.max_clock_skew;
  ingest.agent_limits = s->agent_limits_.get();
  ingest.delta = options.delta;
  ingest.hello = options.hello;
  ingest.token_recheck = options.token_recheck;
  ingest.token_recheck_clock = options.token_recheck_clock;
  ingest.counters = &s->counters_;
  ingest.writer = options.writer;
  if (options.max_inflight_bytes > 0) {
    s->inflight_ = std::make_unique<InflightBudget>(InflightBudget::Options{options.max_inflight_bytes});
    ingest.inflight = s->inflight_.get();
  }
  s->ingest_ =
      std::make_unique<IngestService>(*s->store_, s->registry_, *s->pool_, s->sweeps_.get(), *s->authorizer_, ingest);
  s->queries_ = std::make_unique<QueryService>(*s->store_, *s->store_, s->registry_, *s->sweeps_, *s->pool_,
                                               *s->authorizer_, s->fleet_.get());
  s->baselines_ = std::make_unique<BaselineService>(*s->store_, *s->store_, *s->authorizer_);
  s->admin_ = std::make_unique<AdminService>(*s->store_, *s->store_, *s->store_, *s->authorizer_, s->registry_,
                                             s->fleet_.get());

  grpc::ServerBuilder builder;
  int selected_port = 0;
  builder.AddListeningPort(options.listen, *credentials, &selected_port);
  builder.RegisterService(s->ingest_.get());
  builder.RegisterService(s->queries_.get());
  builder.RegisterService(s->baselines_.get());
  builder.RegisterService(s->admin_.get());
  builder.SetMaxReceiveMessageSize(options.max_receive_message_bytes);
  // Agents send gzip; answering in gzip too costs little on these small messages.
  builder.SetDefaultCompressionAlgorithm(GRPC_COMPRESS_GZIP);
  // A phone that drops off the network leaves a half-open TCP connection: keepalive pings find it, so
  // the device shows offline within a minute or two instead of hours. Agents may ping us as well.
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 60 * 1000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 20 * 1000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 10 * 1000);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  // What gRPC buffers of a stream nobody reads — one waiting for room in the in-flight budget — is its
  // HTTP/2 window. With BDP probing gRPC grows every stream's window towards megabytes on a fast link
  // (on loopback 300 waiting streams held 128 MiB), so the budget would bound only half the memory. A
  // fixed 16 KiB window costs a stream being read nothing: gRPC opens it to the whole message it reads.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, kStreamWindowBytes);
  // A waiting stream's window is not a copy: it is pieces of the connection's read buffers, and each
  // piece keeps its whole buffer alive. Under load gRPC reads into 64 KiB buffers, so a stream waiting
  // with 16 KiB held up to 128 KiB (at 2,000 agents and a sweep, 168 MB of the server's peak heap). Reads
  // of at most 8 KiB use 8 KiB buffers: a waiting stream holds its window and one buffer more
  // (docs/performance.md, "Memory").
  builder.AddChannelArgument(GRPC_ARG_TCP_MAX_READ_CHUNK_SIZE, kReadChunkBytes);
  // gRPC sets SO_REUSEPORT by default: a second server on the same port would then silently share the
  // agents with this one (and its own database). Fail to start instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  s->server_ = builder.BuildAndStart();
  if (s->server_ == nullptr || selected_port == 0) {
    s->server_.reset();
    if (s->fleet_ != nullptr) s->fleet_->Stop();
    s->sweeps_->Shutdown();
    s->pool_->Shutdown();
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", options.listen, " (address in use, or not an address of this machine?)"));
  }
  s->port_ = selected_port;
  s->address_ = absl::StrCat(options.listen.substr(0, colon), ":", selected_port);
  if (absl::Status http = s->StartHttp(options, token_rule.http); !http.ok()) return http;  // ~LabServer stops the rest
  if (absl::Status retention = s->StartRetention(options); !retention.ok()) return retention;
  return s;
}

absl::Status LabServer::StartRetention(const LabServerOptions& options) {
  if (options.retention.policy.full <= std::chrono::milliseconds::zero() &&
      options.retention.policy.raw <= std::chrono::milliseconds::zero()) {
    return absl::OkStatus();
  }
  RetentionWorkerOptions retention = options.retention;
  if (retention.db_path.empty()) retention.db_path = options.db_path;
  if (retention.db_path.empty()) return absl::InvalidArgumentError("retention: no database path (--db)");
  absl::StatusOr<std::unique_ptr<RetentionWorker>> worker = RetentionWorker::Start(std::move(retention));
  if (!worker.ok()) return absl::Status(worker.status().code(), absl::StrCat("retention: ", worker.status().message()));
  retention_ = std::move(*worker);
  return absl::OkStatus();
}

absl::Status LabServer::StartHttp(const LabServerOptions& options, bool require_tokens) {
  if (options.http.listen.empty()) return absl::OkStatus();
  // Over the same tokens, with the HTTP address's own rule (it may be exposed where gRPC is not).
  http_authorizer_ =
      std::make_unique<security::Authorizer>(*store_, security::AuthorizerOptions{require_tokens, false});
  metrics_source_ =
      std::make_unique<MetricsSource>(*store_, registry_, sweeps_.get(), counters_, options.metrics_top_processes,
                                      options.metrics_app_summary, ingest_.get(), fleet_.get());
  if (options.dashboard) {
    dashboard_sessions_ = std::make_unique<DashboardSessions>(RealSteadyClock());
    dashboard_ = std::make_unique<DashboardSite>(*store_, registry_, *http_authorizer_, *dashboard_sessions_,
                                                 baselines_.get(), fleet_.get());
  }
  MetricsHttpOptions http = options.http;
  http.tls_cert_file = options.tls_cert_file;
  http.tls_key_file = options.tls_key_file;
  absl::StatusOr<std::unique_ptr<MetricsHttpServer>> started =
      MetricsHttpServer::Start(http, *http_authorizer_, *metrics_source_, dashboard_.get());
  if (!started.ok()) return started.status();
  http_ = std::move(*started);
  return absl::OkStatus();
}

LabServer::~LabServer() { Stop(); }

void LabServer::Stop() {
  {
    absl::MutexLock lock(&stop_mu_);
    if (stopping_) {
      // Another thread is stopping: return only once it is done (a destructor may follow).
      stop_mu_.Await(absl::Condition(&stopped_));
      return;
    }
    stopping_ = true;
  }
  // First: its batches would compete with the last captures' writes for the database.
  if (retention_ != nullptr) retention_->Stop();
  if (http_ != nullptr) http_->Stop();
  if (ingest_ != nullptr) ingest_->StopAccepting();
  // Running sweeps end first, so their progress streams finish instead of holding Shutdown up.
  if (sweeps_ != nullptr) sweeps_->Shutdown();
  // Agents would keep their streams open forever; cancel them. A capture already on the worker pool is
  // still stored (its ack may not reach the agent, which then resends it and gets duplicate=true).
  registry_.CancelAll();
  if (server_ != nullptr) {
    server_->Shutdown(std::chrono::system_clock::now() + shutdown_grace_);
    server_->Wait();
  }
  if (pool_ != nullptr) pool_->Shutdown();
  if (fleet_ != nullptr) fleet_->Stop();
  if (heap_ != nullptr) heap_->Stop();
  LogLine("stopped");
  {
    absl::MutexLock lock(&stop_mu_);
    stopped_ = true;
  }
}

void LabServer::Wait() {
  absl::MutexLock lock(&stop_mu_);
  stop_mu_.Await(absl::Condition(&stopped_));
}

}  // namespace memfleet::server
