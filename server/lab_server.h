// LabServer: the whole memfleet-server wired together — store, worker pool, agent registry, sweep
// coordinator, the agent and query gRPC services — listening on one address. server_main and the
// tests share it, so a test runs exactly what ships.
//
//   absl::StatusOr<std::unique_ptr<LabServer>> s = LabServer::Start("/tmp/x/memfleet.db", "127.0.0.1:0");
//   std::string target = absl::StrCat("127.0.0.1:", (*s)->port());
//   (*s)->Stop();   // cancels agent streams, drains the worker pool, ends running sweeps
//
// Thread-safe: Stop may be called from any thread (once is enough; it is idempotent).
#ifndef MEMFLEET_SERVER_LAB_SERVER_H_
#define MEMFLEET_SERVER_LAB_SERVER_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "server/fleet/agent_registry.h"
#include "server/query/admin_service.h"
#include "server/query/baseline_service.h"
#include "server/ingest/inflight_budget.h"
#include "server/ingest/ingest_service.h"
#include "server/http/metrics/server_counters.h"
#include "server/http/dashboard_sessions.h"
#include "server/http/dashboard_site.h"
#include "server/fleet/fleet_link.h"
#include "server/http/metrics_http_server.h"
#include "server/http/metrics_source.h"
#include "server/query/query_service.h"
#include "server/security/agent_limits.h"
#include "server/security/authorizer.h"
#include "server/fleet/sweep_coordinator.h"
#include "server/history/retention_worker.h"
#include "server/core/heap_policy.h"
#include "server/core/worker_pool.h"
#include "storage/store.h"

namespace memfleet::server {

struct LabServerOptions {
  std::string db_path;                             // an SQLite file (created when missing) or a PostgreSQL URI
  std::string listen = "127.0.0.1:0";              // HOST:PORT; port 0 picks a free one (see port())
  size_t workers = 2;                              // engine + store threads
  size_t max_queued_captures = 64;                 // other jobs waiting; an agent stream queues one at most
  uint32_t agent_interval_s = 0;                   // Welcome.interval_s (0: agents keep their own)
  int max_receive_message_bytes = 8 << 20;         // chunks are 256 KiB; leaves room for big single nodes
  std::chrono::milliseconds shutdown_grace{5000};  // for in-flight RPCs at Stop
  SweepCoordinator::Options sweeps;
  // Servers sharing one PostgreSQL database (docs/architecture.md "More than one server"): sessions and
  // relayed sweeps. Unused on SQLite. An empty server_id is HOSTNAME:PORT of `listen`.
  FleetLinkOptions fleet;
  // Security (docs/security.md). PEM files; cert + key: TLS on the port; client_ca: agents must
  // present a certificate it signed (mutual TLS; CLI users need not).
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string client_ca_file;
  // Beyond loopback (the gRPC or the HTTP address) Start refuses to listen without TLS and a valid token,
  // and that port then checks tokens even with an empty tokens table; `insecure` (--insecure) lifts both.
  bool insecure = false;
  security::AgentLimitsOptions agent_limits;
  wire::AssemblyLimits capture_limits;
  std::chrono::seconds max_clock_skew = kDefaultMaxClockSkew;  // captures dated further ahead are refused
  DeltaOptions delta;  // raw captures stored as deltas of a recent whole capture (docs/performance.md)
  // What the captures in flight (received, not yet answered) of all agent streams may hold; a stream
  // whose capture does not fit waits unread (docs/performance.md, "Memory"). 0: unbounded.
  size_t max_inflight_bytes = size_t{64} << 20;
  CaptureWriter::Options writer;                   // group commit of captures (server/ingest/capture_writer.h)
  HelloWatchdogOptions hello;                      // agent streams that have not said Hello yet (docs/security.md)
  std::chrono::milliseconds token_recheck{10000};  // tokens of open agent streams checked again (0: off)
  SteadyClock* token_recheck_clock = nullptr;      // the recheck period is measured on it; null: the real one
  // GET /metrics over HTTP(S) (docs/metrics.md); off while http.listen is "". Its TLS files are the
  // gRPC ones (tls_cert_file, tls_key_file), whatever http's say.
  MetricsHttpOptions http;
  size_t metrics_top_processes = kDefaultMetricsTopProcesses;  // per device
  bool metrics_app_summary = false;  // the top processes' App Summary on /metrics (--metrics-app-summary)
  bool dashboard = false;            // the browser dashboard on the HTTP port too (docs/dashboard.md)
  // The malloc heap's arenas and trims (server/core/heap_policy.h), set before the server's threads start
  // and stopped with it; tests inject the trim and its clock.
  HeapPolicyOptions heap;
  // Background thinning of stored history (--retain-full-days, --retain-raw-days, docs/performance.md
  // "Retention"), over a connection of its own to the database; off while retention.policy.full and .raw
  // are 0. Its db_path "" is
  // db_path. Tests inject its clock.
  RetentionWorkerOptions retention;
};

class LabServer {
 public:
  static absl::StatusOr<std::unique_ptr<LabServer>> Start(const LabServerOptions& options);
  static absl::StatusOr<std::unique_ptr<LabServer>> Start(const std::string& db_path,
                                                          const std::string& listen = "127.0.0.1:0");
  // With a store the caller opened (tests: a store that fails on demand); options.db_path is unused.
  // FailedPrecondition, naming what to add, when an address is beyond loopback without TLS and tokens
  // (docs/security.md).
  static absl::StatusOr<std::unique_ptr<LabServer>> StartWithStore(std::unique_ptr<storage::Store> store,
                                                                   const LabServerOptions& options);
  LabServer(const LabServer&) = delete;
  LabServer& operator=(const LabServer&) = delete;
  ~LabServer();  // Stop()

  int port() const { return port_; }
  // HOST:PORT as listening, with the real port ("127.0.0.1:41234").
  const std::string& address() const { return address_; }
  // The HTTP port's HOST:PORT ("" when off).
  std::string http_address() const { return http_ != nullptr ? http_->address() : ""; }

  storage::Store& store() { return *store_; }
  AgentRegistry& registry() { return registry_; }
  SweepCoordinator& sweeps() { return *sweeps_; }
  const WorkerPool& pool() const { return *pool_; }
  // Null unless the database is shared by several servers (PostgreSQL).
  FleetLink* fleet() { return fleet_.get(); }
  // Null unless retention is on (options.retention).
  const RetentionWorker* retention() const { return retention_.get(); }
  // The in-flight budget of the agent streams' captures; null when unbounded (max_inflight_bytes 0).
  const InflightBudget* inflight() const { return inflight_.get(); }
  // Agent streams the server has started that have not said Hello yet.
  size_t agent_streams_waiting_for_hello() const { return ingest_->streams_waiting_for_hello(); }

  // Graceful stop: no new agent streams, open streams cancelled (in-flight captures still stored),
  // RPCs given shutdown_grace to finish, the worker pool drained, running sweeps ended, heap trims and
  // retention runs over.
  void Stop() ABSL_LOCKS_EXCLUDED(stop_mu_);
  // Blocks until Stop has been called (from another thread) and completed.
  void Wait() ABSL_LOCKS_EXCLUDED(stop_mu_);

 private:
  LabServer() = default;
  absl::Status StartHttp(const LabServerOptions& options, bool require_tokens);
  absl::Status StartRetention(const LabServerOptions& options);

  std::unique_ptr<HeapPolicy> heap_;  // first: set before the other parts start their threads
  std::unique_ptr<storage::Store> store_;
  metrics::ServerCounters counters_;  // counted by the ingest (so it outlives it), shown on /metrics
  std::unique_ptr<security::Authorizer> authorizer_;
  std::unique_ptr<security::AgentLimits> agent_limits_;
  std::unique_ptr<WorkerPool> pool_;
  std::unique_ptr<InflightBudget> inflight_;  // null: unbounded
  AgentRegistry registry_;
  std::unique_ptr<FleetLink> fleet_;
  std::unique_ptr<SweepCoordinator> sweeps_;
  std::unique_ptr<IngestService> ingest_;
  std::unique_ptr<QueryService> queries_;
  std::unique_ptr<BaselineService> baselines_;  // docs/baselines.md
  std::unique_ptr<AdminService> admin_;         // minting agent tokens (docs/deploy.md)
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<security::Authorizer> http_authorizer_;
  std::unique_ptr<MetricsSource> metrics_source_;
  std::unique_ptr<DashboardSessions> dashboard_sessions_;
  std::unique_ptr<DashboardSite> dashboard_;  // null unless options.dashboard
  std::unique_ptr<MetricsHttpServer> http_;
  std::unique_ptr<RetentionWorker> retention_;  // null unless options.retention is on
  std::chrono::milliseconds shutdown_grace_{5000};
  int port_ = 0;
  std::string address_;

  absl::Mutex stop_mu_;
  bool stopping_ ABSL_GUARDED_BY(stop_mu_) = false;  // Stop began
  bool stopped_ ABSL_GUARDED_BY(stop_mu_) = false;   // Stop completed
};

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_LAB_SERVER_H_
