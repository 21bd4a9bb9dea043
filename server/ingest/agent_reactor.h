// IngestService::Reactor: one agent stream on gRPC's callback API. gRPC calls it on a small shared set
// of threads, so none of its callbacks may wait: each step that may (authorizing, the Hello's device
// record, every message of the stream, since a capture's end is stored right there) runs as a job on the
// worker pool, one job at a time per stream. A job's end starts the next read, so a stream never has more
// than one job queued and an agent that sends faster than the pool stores is slowed by HTTP/2 flow
// control, not by the server's memory. With an in-flight budget (inflight_budget.h), a job that leaves a
// capture short of room does not start the next read: the stream waits (holding no thread) until the
// budget grants the room, and its agent waits at its socket with the capture in its spool. A stream
// cancelled while it waits ends at once; one asked for a sweep's capture while it waits has its wait
// promoted, since the sweep's capture comes after the one waiting.
//
// Writes (Welcome, acks, rejections, sweeps' commands) may come from any thread through the stream's
// AgentSession; they are queued here and written one at a time. The call is finished once the stream's
// last job has closed the session and the queued writes are out; gRPC then calls OnDone, which deletes
// the reactor. Nothing refers to it after that: the session is closed (it drops later writes and
// cancels) before Finish, and the Hello watchdog forgets the call when the Hello step ends.
#ifndef MEMFLEET_SERVER_INGEST_AGENT_REACTOR_H_
#define MEMFLEET_SERVER_INGEST_AGENT_REACTOR_H_

#include <grpcpp/grpcpp.h>

#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "memfleet/v1/agent_service.pb.h"
#include "server/ingest/agent_stream.h"
#include "server/ingest/hello_watchdog.h"
#include "server/ingest/inflight_budget.h"
#include "server/ingest/ingest_service.h"

namespace memfleet::server {

class IngestService::Reactor final : public grpc::ServerBidiReactor<v1::AgentMessage, v1::ServerMessage> {
 public:
  Reactor(IngestService& service, grpc::CallbackServerContext* context);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

  // For the session's sink, from any thread until the session is closed: false once the stream is
  // finishing or a write failed.
  bool QueueWrite(const v1::ServerMessage& message) ABSL_LOCKS_EXCLUDED(write_mu_);
  void Cancel() { context_->TryCancel(); }

 private:
  class Sink;  // the session's MessageSink
  ~Reactor() override = default;

  // What a step leaves to do: read the next message, or finish the call with a status.
  using Next = std::optional<grpc::Status>;
  enum class Phase { kStart, kHello, kStreaming };

  // Runs the stream's next step on the worker pool (inline when the pool has shut down, at the very end
  // of the server), with what the read gave: `read` false when the stream ended or was cancelled; or,
  // with `lease`, hands the room the budget granted to the capture being received. `urgent`: the step
  // belongs to a sweep's capture, and goes ahead of periodic ones (PostUrgent).
  void RunJob(bool read, std::shared_ptr<v1::AgentMessage> message, bool urgent = false,
              std::shared_ptr<InflightBudget::Lease> lease = nullptr) ABSL_LOCKS_EXCLUDED(job_mu_);
  // After a job that left `bytes` of the current capture unreserved: reads on once the budget grants them.
  void WaitForRoom(size_t bytes, bool urgent) ABSL_LOCKS_EXCLUDED(wait_mu_);
  void PromoteWait() ABSL_LOCKS_EXCLUDED(wait_mu_);
  // Whether `message` is part of a sweep's capture: its Begin is the answer to a sweep that asked this
  // device (SweepCoordinator::IsAnswer), and its chunks and End follow.
  bool IsSweepUpload(const v1::AgentMessage& message) ABSL_EXCLUSIVE_LOCKS_REQUIRED(job_mu_);
  Next Step(bool read, v1::AgentMessage& message) ABSL_EXCLUSIVE_LOCKS_REQUIRED(job_mu_);
  Next Start() ABSL_EXCLUSIVE_LOCKS_REQUIRED(job_mu_);
  Next OnHello(bool read, v1::AgentMessage message) ABSL_EXCLUSIVE_LOCKS_REQUIRED(job_mu_);
  Next OnMessage(bool read, const v1::AgentMessage& message) ABSL_EXCLUSIVE_LOCKS_REQUIRED(job_mu_);
  // The session ends: unregistered, closed, logged. `result` is what ended it.
  grpc::Status EndSession(absl::Status result) ABSL_EXCLUSIVE_LOCKS_REQUIRED(job_mu_);
  void FinishWhenWritten(grpc::Status status) ABSL_LOCKS_EXCLUDED(write_mu_);

  IngestService& service_;
  grpc::CallbackServerContext* const context_;
  const std::string peer_;  // a cancelled call no longer knows it
  // gRPC fills it between StartRead and OnReadDone, which takes it out under job_mu_ (not annotated:
  // gRPC writes it without the lock).
  v1::AgentMessage incoming_;

  // Held by each job: jobs are sequential already (a job starts the read whose end posts the next), and
  // the lock shows that order to ThreadSanitizer, which cannot see it through gRPC's own threads.
  absl::Mutex job_mu_;
  Phase phase_ ABSL_GUARDED_BY(job_mu_) = Phase::kStart;
  security::Principal principal_ ABSL_GUARDED_BY(job_mu_);
  std::unique_ptr<security::AgentLimits::StreamLease> lease_ ABSL_GUARDED_BY(job_mu_);
  std::unique_ptr<HelloWatchdog::Wait> hello_wait_ ABSL_GUARDED_BY(job_mu_);
  std::shared_ptr<AgentSession> session_ ABSL_GUARDED_BY(job_mu_);
  std::string device_id_ ABSL_GUARDED_BY(job_mu_);
  std::unique_ptr<AgentStream> agent_ ABSL_GUARDED_BY(job_mu_);
  std::string sweep_capture_id_ ABSL_GUARDED_BY(job_mu_);  // the sweep capture being uploaded, if any

  // The stream's wait for room in the in-flight budget (0: none), and whether the call was cancelled: set
  // by the job that starts the wait, cleared by the grant, looked at by OnCancel and by a CaptureNow's write.
  absl::Mutex wait_mu_;
  InflightBudget::Waiter waiter_ ABSL_GUARDED_BY(wait_mu_) = 0;
  bool waiting_urgent_ ABSL_GUARDED_BY(wait_mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(wait_mu_) = false;

  absl::Mutex write_mu_;
  // The front is being written while `writing_` (pushing others keeps its address).
  std::deque<v1::ServerMessage> writes_ ABSL_GUARDED_BY(write_mu_);
  bool writing_ ABSL_GUARDED_BY(write_mu_) = false;
  bool write_failed_ ABSL_GUARDED_BY(write_mu_) = false;
  std::optional<grpc::Status> finish_with_ ABSL_GUARDED_BY(write_mu_);  // set: finish once written
  bool finish_started_ ABSL_GUARDED_BY(write_mu_) = false;
};

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_INGEST_AGENT_REACTOR_H_
