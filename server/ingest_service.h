// IngestService: the AgentService the agents connect to — one long-lived bidirectional stream per
// agent (Hello, then captures as Begin/Chunk.../End, heartbeats), answered with Welcome, an ack or a
// rejection per capture, and commands from sweeps. The stream's thread only reads and assembles; each
// assembled capture goes to the worker pool (CaptureIngestor), which acks after the store committed.
//
//   IngestService ingest(store, registry, pool, &sweeps, {});
//   builder.RegisterService(&ingest);
//
// Protocol violations (no Hello first, a chunk or end without its begin, a second Hello) end the stream
// with INVALID_ARGUMENT; a malformed capture (out-of-order chunk, bad path, counts that do not match,
// over a limit) only gets CaptureRejected{retry=false} and the stream goes on. Thread-safe (gRPC runs
// one Connect per stream thread).
#ifndef MEMFLEET_SERVER_INGEST_SERVICE_H_
#define MEMFLEET_SERVER_INGEST_SERVICE_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <thread>
#include <mutex>
#include <memory>
#include <map>
#include <condition_variable>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "memfleet/v1/agent_service.grpc.pb.h"
#include "proto/capture_codec.h"
#include "server/agent_registry.h"
#include "server/capture_ingestor.h"
#include "server/clock_skew.h"
#include "server/hello_watchdog.h"
#include "server/security/agent_limits.h"
#include "server/security/authorizer.h"
#include "server/sweep_coordinator.h"
#include "server/worker_pool.h"
#include "storage/store.h"

namespace memfleet::server {

struct IngestOptions {
  uint32_t welcome_interval_s = 0;  // Welcome.interval_s: 0 lets each agent keep its own
  std::string server_version = "memfleet-server 0.1.0";
  wire::AssemblyLimits limits;
  std::function<std::string()> now;  // RFC 3339 wall clock; null: NowRfc3339
  // A capture dated more than this after `now` is refused for good (CaptureRejected{retry=false}): kept, a
  // device clock at 9999-12-31 would stay the device's latest capture forever (clock_skew.h).
  std::chrono::seconds max_clock_skew = kDefaultMaxClockSkew;
  // Per-agent stream and capture-rate limits (docs/security.md); null: none.
  security::AgentLimits* agent_limits = nullptr;
  DeltaOptions delta;  // delta storage of raw captures (delta_keyframes.h)
  HelloWatchdogOptions hello;  // streams that have not said Hello yet (hello_watchdog.h)
  // How often the tokens of open agent streams are checked again, so that a revoked token's idle stream
  // ends without waiting for its next capture (which is checked anyway). 0: only at each capture.
  std::chrono::milliseconds token_recheck{10000};
};

class IngestService final : public v1::AgentService::Service {
 public:
  IngestService(storage::Store& store, AgentRegistry& registry, WorkerPool& pool, SweepCoordinator* sweeps,
                const security::Authorizer& authorizer, IngestOptions options);

  grpc::Status Connect(grpc::ServerContext* context,
                       grpc::ServerReaderWriter<v1::ServerMessage, v1::AgentMessage>* stream) override;

  // New streams are refused with UNAVAILABLE from now on (server shutdown).
  void StopAccepting() { accepting_ = false; }

 private:
  storage::Store& store_;
  AgentRegistry& registry_;
  WorkerPool& pool_;
  SweepCoordinator* sweeps_;
  const security::Authorizer& authorizer_;
  const IngestOptions options_;
  CaptureIngestor ingestor_;
  HelloWatchdog hello_watchdog_;
  std::atomic<bool> accepting_{true};

  // Authenticated streams, for the token recheck: their principal and session.
  void RecheckTokens();
  struct Watched {
    security::Principal principal;
    std::weak_ptr<AgentSession> session;
  };
  std::mutex watched_mu_;
  std::condition_variable watched_cv_;
  std::map<const AgentSession*, Watched> watched_;
  bool stopping_ = false;
  std::thread recheck_thread_;  // last: started after everything it uses

 public:
  ~IngestService() override;
};

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_INGEST_SERVICE_H_
