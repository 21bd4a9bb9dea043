// AgentStream: what one agent's stream does after its Hello was accepted — a state machine over the
// agent's messages (captures as Begin/Chunk.../End, drop reports, failed commands, heartbeats) that
// assembles captures, prepares each (engine, encoding) and hands it to the store's writer, and answers on
// the session. It holds no gRPC type: IngestService feeds it what the stream reads, and unit tests feed it
// messages directly.
//
//   AgentStream agent(deps, session, device);
//   while (status.ok() && stream->Read(&msg)) {
//     status = agent.OnMessage(msg);
//     if (size_t short_bytes = agent.UnreservedBytes()) agent.AddLease(... wait for the budget ...);
//   }
//   agent.Finish();  // waits for the captures still at the writer, so their acks go out
//
// With an in-flight budget (IngestOptions::inflight), a capture holds a lease of it from its Begin until
// it is answered: the caller reserves what UnreservedBytes says before it reads the capture's next message.
//
// Not thread-safe: one thread at a time feeds it (successive calls may come from different threads if
// the caller orders them, as IngestService's stream reactor does).
//
// A protocol violation (a chunk or end without its begin, a second Hello) or a token no longer valid is
// an error status: the stream ends with it. A malformed capture only gets CaptureRejected and the stream
// goes on.
#ifndef MEMFLEET_SERVER_INGEST_AGENT_STREAM_H_
#define MEMFLEET_SERVER_INGEST_AGENT_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "memfleet/v1/agent_service.pb.h"
#include "proto/capture_codec.h"
#include "server/fleet/agent_registry.h"
#include "server/ingest/capture_ingestor.h"
#include "server/ingest/ingest_options.h"
#include "server/security/authorizer.h"
#include "server/fleet/sweep_coordinator.h"
#include "server/ingest/capture_writer.h"
#include "server/ingest/inflight_budget.h"
#include "storage/capture_store.h"

namespace memfleet::server {

// What an agent stream uses; all outlive it.
struct AgentStreamDeps {
  storage::CaptureStore& store;
  AgentRegistry& registry;
  // Where captures are stored once prepared (on the caller's thread, at their CaptureEnd). Null: stored
  // on the caller's thread too, one transaction each.
  CaptureWriter* writer;
  SweepCoordinator* sweeps;  // null: no sweeps
  CaptureIngestor& ingestor;
  const security::Authorizer& authorizer;  // rechecks the stream's token at each capture
  const IngestOptions& options;
};

// The captures of one stream still at the writer, so that the stream's end can wait for their acks.
class PendingJobs {
 public:
  void Add();
  void Done();
  void WaitIdle();

 private:
  absl::Mutex mu_;
  int count_ ABSL_GUARDED_BY(mu_) = 0;
};

class AgentStream {
 public:
  // `device` is what the Hello recorded; drop reports update it. `principal` is rechecked at each capture.
  AgentStream(AgentStreamDeps deps, std::shared_ptr<AgentSession> session, storage::DeviceRecord device,
              security::Principal principal);
  AgentStream(const AgentStream&) = delete;
  AgentStream& operator=(const AgentStream&) = delete;

  // Handles one message; an error ends the stream with that status.
  absl::Status OnMessage(const v1::AgentMessage& message);
  // The stream ended (the agent closed it, or OnMessage failed): a capture cut short fails its sweep, and
  // the captures at the writer are waited for.
  void Finish();

  // Bytes of the in-flight budget the capture being received needs beyond its lease (0 without a budget,
  // or between captures): reserve them before reading on.
  size_t UnreservedBytes() const;
  // Adds a lease reserved for the capture being received (released when it is answered or dropped).
  void AddLease(InflightBudget::Lease lease);
  // Whether the capture being received was asked for by a sweep (its room is reserved ahead of others).
  bool InSweepCapture() const { return assembler_.active() && !current_.sweep_id.empty(); }

 private:
  absl::Status OnBegin(const v1::CaptureBegin& begin);
  absl::Status OnChunk(const v1::CaptureChunk& chunk);
  absl::Status OnEnd(const v1::CaptureEnd& end);
  void OnDropped(const v1::DroppedReport& dropped);
  void OnCommandFailed(const v1::CommandFailed& failed);
  // The Begin's fields, checked before a capture that can never be stored is assembled.
  absl::Status CheckBegin(const v1::CaptureBegin& begin);
  void QueueCapture();
  // Refuses the current capture (its later chunks and end are dropped quietly) and resets the assembler.
  void Reject(absl::StatusCode code, const std::string& message, bool retry);

  AgentStreamDeps deps_;
  std::shared_ptr<AgentSession> session_;
  storage::DeviceRecord device_;
  const security::Principal principal_;
  std::shared_ptr<PendingJobs> pending_ = std::make_shared<PendingJobs>();
  wire::CaptureAssembler assembler_;
  AssembledCapture current_;
  uint64_t announced_bytes_ = 0;  // the current capture's Begin: content bytes and node count
  uint64_t announced_nodes_ = 0;
  InflightBudget::Lease lease_;  // the current capture's share of the in-flight budget
  std::string skip_id_;          // a rejected capture whose remaining chunks and end are dropped quietly
};

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_INGEST_AGENT_STREAM_H_
