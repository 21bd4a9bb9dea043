// IngestService: the AgentService the agents connect to — one long-lived bidirectional stream per
// agent (Hello, then captures as Begin/Chunk.../End, heartbeats), answered with Welcome, an ack or a
// rejection per capture, and commands from sweeps.
//
//   IngestService ingest(store, registry, pool, &sweeps, {});
//   builder.RegisterService(&ingest);
//
// Built on gRPC's callback API, so the server's threads do not grow with its streams: each stream is a
// reactor (server/ingest/agent_reactor.h) whose gRPC callbacks never block. Everything that may wait (the token
// lookup, the device's record, a capture's accounting and commit) runs as a job on the worker pool, one
// job at a time per stream, and the next message is read when the job is done; answers go out through a
// queue on the reactor, one write at a time.
//
// Protocol violations (no Hello first, a chunk or end without its begin, a second Hello) end the stream
// with INVALID_ARGUMENT; a malformed capture (out-of-order chunk, bad path, counts that do not match,
// over a limit) only gets CaptureRejected{retry=false} and the stream goes on. Thread-safe.
#ifndef MEMFLEET_SERVER_INGEST_INGEST_SERVICE_H_
#define MEMFLEET_SERVER_INGEST_INGEST_SERVICE_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "memfleet/v1/agent_service.grpc.pb.h"
#include "proto/capture_codec.h"
#include "server/fleet/agent_registry.h"
#include "server/ingest/capture_ingestor.h"
#include "server/ingest/capture_writer.h"
#include "server/ingest/clock_skew.h"
#include "server/ingest/hello_watchdog.h"
#include "server/ingest/ingest_options.h"
#include "server/security/agent_limits.h"
#include "server/security/authorizer.h"
#include "server/fleet/sweep_coordinator.h"
#include "server/core/task_runner.h"
#include "server/core/worker_pool.h"
#include "storage/capture_store.h"

namespace memfleet::server {

class IngestService final : public v1::AgentService::CallbackService {
 public:
  IngestService(storage::CaptureStore& store, AgentRegistry& registry, WorkerPool& pool, SweepCoordinator* sweeps,
                const security::Authorizer& authorizer, IngestOptions options);

  grpc::ServerBidiReactor<v1::AgentMessage, v1::ServerMessage>* Connect(grpc::CallbackServerContext* context) override;

  // New streams are refused with UNAVAILABLE from now on (server shutdown).
  void StopAccepting() { accepting_ = false; }
  // Streams whose handler has started and that have not said Hello yet (the Hello watchdog's count).
  size_t streams_waiting_for_hello() const { return hello_watchdog_.waiting(); }
  // What the ingest holds and has done, for /metrics.
  struct Load {
    size_t inflight_bytes = 0;
    size_t inflight_capacity_bytes = 0;  // 0: unbounded
    size_t streams_waiting_for_room = 0;
    uint64_t capture_commits = 0;
  };
  Load load() const;

 private:
  storage::CaptureStore& store_;
  AgentRegistry& registry_;
  WorkerPool& pool_;
  SweepCoordinator* sweeps_;
  const security::Authorizer& authorizer_;
  const IngestOptions options_;
  CaptureIngestor ingestor_;
  CaptureWriter writer_;  // group commit of every stream's captures
  HelloWatchdog hello_watchdog_;
  std::atomic<bool> accepting_{true};

  class Reactor;  // one stream (server/ingest/agent_reactor.h)

  // The steps of a stream before the agent's messages: who calls, the stream's lease, the Hello, the
  // session (registered, device recorded). They may wait (the store): they run on the worker pool.
  absl::StatusOr<security::Principal> Authorize(grpc::CallbackServerContext* context);
  absl::StatusOr<std::unique_ptr<security::AgentLimits::StreamLease>> LeaseStream(const security::Principal& principal,
                                                                                  grpc::CallbackServerContext* context);
  // The stream's first read: `read` false when it ended (or was cancelled) first, `timed_out` when the
  // Hello watchdog cancelled it.
  absl::StatusOr<v1::Hello> CheckedHello(bool read, v1::AgentMessage message, bool timed_out, const std::string& peer);
  struct OpenedSession {
    std::shared_ptr<AgentSession> session;
    storage::DeviceRecord device;
  };
  absl::StatusOr<OpenedSession> OpenSession(const security::Principal& principal, const v1::Hello& hello,
                                            const std::string& peer, std::unique_ptr<MessageSink> sink);
  v1::ServerMessage Welcome() const;

  // Authenticated streams, for the token recheck (every token_recheck, a task on recheck_runner_): their
  // principal and session.
  void RecheckTokens() ABSL_LOCKS_EXCLUDED(watched_mu_);
  struct Watched {
    security::Principal principal;
    std::weak_ptr<AgentSession> session;
  };
  // A stream's token is rechecked (when authenticated and rechecks are on) from Hello to its end.
  void WatchTokenOf(const security::Principal& principal, const std::shared_ptr<AgentSession>& session)
      ABSL_LOCKS_EXCLUDED(watched_mu_);
  void Unwatch(const AgentSession* session) ABSL_LOCKS_EXCLUDED(watched_mu_);
  absl::Mutex watched_mu_;
  std::map<const AgentSession*, Watched> watched_ ABSL_GUARDED_BY(watched_mu_);
  std::unique_ptr<TaskRunner> recheck_runner_;  // last: started after everything it uses; null: no rechecks

 public:
  ~IngestService() override;
};

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_INGEST_INGEST_SERVICE_H_
