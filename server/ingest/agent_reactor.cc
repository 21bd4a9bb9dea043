#include "server/ingest/agent_reactor.h"

#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/tsan/happens_before.h"
#include "server/core/clock.h"
#include "server/core/grpc_status.h"

namespace memfleet::server {

class IngestService::Reactor::Sink : public MessageSink {
 public:
  explicit Sink(Reactor* reactor) : reactor_(reactor) {}
  bool Write(const v1::ServerMessage& message) override { return reactor_->QueueWrite(message); }
  void Cancel() override { reactor_->Cancel(); }

 private:
  Reactor* reactor_;  // outlives the sink's use: the session is closed before the call is finished
};

IngestService::Reactor::Reactor(IngestService& service, grpc::CallbackServerContext* context)
    : service_(service), context_(context), peer_(context->peer()) {
  tsan::HandOver(this);   // to the gRPC thread that runs OnDone
  RunJob(true, nullptr);  // Start
}

void IngestService::Reactor::OnReadDone(bool ok) {
  tsan::TakeOver(this);
  auto message = std::make_shared<v1::AgentMessage>();
  bool urgent = false;
  {
    // Uncontended (the stream's previous job released it before this read began); it orders this
    // read's message after that job for ThreadSanitizer.
    absl::MutexLock lock(&job_mu_);
    if (ok) message->Swap(&incoming_);
    urgent = ok && IsSweepUpload(*message);
  }
  RunJob(ok, std::move(message), urgent);
}

bool IngestService::Reactor::IsSweepUpload(const v1::AgentMessage& message) {
  switch (message.msg_case()) {
    case v1::AgentMessage::kBegin: {
      // Only the answer to a sweep that asked this device goes first: naming a sweep is not enough. Before
      // the Hello there is no device (and no Begin is taken then).
      const v1::CaptureBegin& begin = message.begin();
      const bool answer = !begin.sweep_id().empty() && !device_id_.empty() && service_.sweeps_ != nullptr &&
                          service_.sweeps_->IsAnswer(begin.sweep_id(), device_id_, begin.capture_id());
      sweep_capture_id_ = answer ? begin.capture_id() : "";
      return answer;
    }
    case v1::AgentMessage::kChunk:
      return !sweep_capture_id_.empty() && message.chunk().capture_id() == sweep_capture_id_;
    case v1::AgentMessage::kEnd: {
      const bool sweep = !sweep_capture_id_.empty() && message.end().capture_id() == sweep_capture_id_;
      if (sweep) sweep_capture_id_.clear();
      return sweep;
    }
    default:
      return false;
  }
}

void IngestService::Reactor::RunJob(bool read, std::shared_ptr<v1::AgentMessage> message, bool urgent,
                                    std::shared_ptr<InflightBudget::Lease> lease) {
  auto job = [this, read, message = std::move(message), lease = std::move(lease)] {
    Next next;
    size_t unreserved = 0;
    bool sweep = false;
    {
      absl::MutexLock lock(&job_mu_);
      if (lease != nullptr) {
        agent_->AddLease(std::move(*lease));
      } else {
        v1::AgentMessage none;
        next = Step(read, message != nullptr ? *message : none);
      }
      if (!next.has_value() && agent_ != nullptr) {
        unreserved = agent_->UnreservedBytes();
        sweep = agent_->InSweepCapture();
      }
    }
    // After the lock: once Finish is called, OnDone may delete the reactor on another thread.
    tsan::HandOver(this);
    if (next.has_value()) {
      FinishWhenWritten(*std::move(next));
    } else if (unreserved > 0) {
      WaitForRoom(unreserved, sweep);
    } else {
      StartRead(&incoming_);
    }
  };
  // Sweep captures first: a sweep has a deadline, and behind the periodic captures of thousands of
  // streams (first come, first served) few of its answers would be stored in time.
  if (!(urgent ? service_.pool_.PostUrgent(job) : service_.pool_.Post(job))) job();
}

void IngestService::Reactor::WaitForRoom(size_t bytes, bool urgent) {
  bool end = false;
  std::optional<InflightBudget::Lease> now;
  {
    // Held across Reserve: a grant on another thread waits here until waiter_ is set.
    absl::MutexLock lock(&wait_mu_);
    if (cancelled_) {
      end = true;
    } else {
      InflightBudget::Reservation r =
          service_.options_.inflight->Reserve(bytes, urgent, [this](InflightBudget::Lease granted) {
            bool promoted = false;
            {
              absl::MutexLock lock(&wait_mu_);
              waiter_ = 0;
              promoted = waiting_urgent_;
            }
            RunJob(true, nullptr, promoted, std::make_shared<InflightBudget::Lease>(std::move(granted)));
          });
      if (r.lease.has_value()) {
        now = std::move(r.lease);
      } else {
        waiter_ = r.waiter;
        waiting_urgent_ = urgent;
      }
    }
  }
  if (end) {
    RunJob(false, nullptr);  // cancelled: the step of a read that failed ends the session
  } else if (now.has_value()) {
    RunJob(true, nullptr, urgent, std::make_shared<InflightBudget::Lease>(*std::move(now)));
  }
  // Else the stream waits; the grant (or OnCancel) goes on.
}

IngestService::Reactor::Next IngestService::Reactor::Step(bool read, v1::AgentMessage& message) {
  switch (phase_) {
    case Phase::kStart:
      return Start();
    case Phase::kHello:
      return OnHello(read, std::move(message));
    case Phase::kStreaming:
      return OnMessage(read, message);
  }
  return grpc::Status(grpc::StatusCode::INTERNAL, "agent stream in no known phase");
}

IngestService::Reactor::Next IngestService::Reactor::Start() {
  if (!service_.accepting_) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is shutting down");
  absl::StatusOr<security::Principal> principal = service_.Authorize(context_);
  if (!principal.ok()) return ToGrpcStatus(principal.status());
  principal_ = *std::move(principal);
  absl::StatusOr<std::unique_ptr<security::AgentLimits::StreamLease>> lease =
      service_.LeaseStream(principal_, context_);
  if (!lease.ok()) return ToGrpcStatus(lease.status());
  lease_ = *std::move(lease);
  absl::StatusOr<std::unique_ptr<HelloWatchdog::Wait>> waiting = service_.hello_watchdog_.Watch(context_);
  if (!waiting.ok()) {
    LogLine(absl::StrCat("agent stream from ", peer_, " refused: ", waiting.status().message()));
    return ToGrpcStatus(absl::ResourceExhaustedError(waiting.status().message()));
  }
  hello_wait_ = *std::move(waiting);
  phase_ = Phase::kHello;
  return std::nullopt;
}

IngestService::Reactor::Next IngestService::Reactor::OnHello(bool read, v1::AgentMessage message) {
  const bool timed_out = hello_wait_->timed_out();
  hello_wait_.reset();  // no longer watched: the watchdog will not touch the call again
  absl::StatusOr<v1::Hello> hello = service_.CheckedHello(read, std::move(message), timed_out, peer_);
  if (!hello.ok()) return ToGrpcStatus(hello.status());
  absl::StatusOr<OpenedSession> opened = service_.OpenSession(principal_, *hello, peer_, std::make_unique<Sink>(this));
  if (!opened.ok()) return ToGrpcStatus(opened.status());
  session_ = opened->session;
  device_id_ = opened->device.device_id;
  service_.WatchTokenOf(principal_, session_);
  agent_ = std::make_unique<AgentStream>(
      AgentStreamDeps{service_.store_, service_.registry_, &service_.writer_, service_.sweeps_, service_.ingestor_,
                      service_.authorizer_, service_.options_},
      session_, std::move(opened->device), principal_);
  phase_ = Phase::kStreaming;
  if (!session_->Write(service_.Welcome())) return EndSession(absl::CancelledError("stream broken"));
  return std::nullopt;
}

IngestService::Reactor::Next IngestService::Reactor::OnMessage(bool read, const v1::AgentMessage& message) {
  if (!read) return EndSession(absl::OkStatus());
  absl::Status result = agent_->OnMessage(message);
  if (!result.ok()) return EndSession(result);
  return std::nullopt;
}

grpc::Status IngestService::Reactor::EndSession(absl::Status result) {
  agent_->Finish();
  service_.registry_.Unregister(session_);
  service_.Unwatch(session_.get());
  const bool was_cancelled = session_->cancelled() || context_->IsCancelled();
  session_->Close();  // no write or cancel reaches the reactor after this
  lease_.reset();
  LogLine(absl::StrCat("agent ", device_id_, " disconnected", result.ok() ? "" : absl::StrCat(": ", result.message()),
                       was_cancelled ? " (cancelled)" : ""));
  if (result.ok() && was_cancelled) return grpc::Status(grpc::StatusCode::CANCELLED, "stream cancelled");
  return ToGrpcStatus(result);
}

// StartWrite is called under write_mu_: it never runs a reaction itself (OnWriteDone comes on a gRPC
// thread), and the lock orders each write's start before the OnWriteDone that starts the next, for
// ThreadSanitizer too.
bool IngestService::Reactor::QueueWrite(const v1::ServerMessage& message) {
  if (message.has_capture_now()) PromoteWait();
  absl::MutexLock lock(&write_mu_);
  if (finish_with_.has_value() || write_failed_) return false;
  writes_.push_back(message);
  if (writing_) return true;
  writing_ = true;
  tsan::HandOver(this);
  StartWrite(&writes_.front());
  return true;
}

void IngestService::Reactor::OnWriteDone(bool ok) {
  tsan::TakeOver(this);
  std::optional<grpc::Status> finish;
  {
    absl::MutexLock lock(&write_mu_);
    writes_.pop_front();
    if (!ok) {
      write_failed_ = true;  // the peer is gone; its read ends the stream
      writes_.clear();
    }
    if (!writes_.empty()) {
      tsan::HandOver(this);
      StartWrite(&writes_.front());
      return;
    }
    writing_ = false;
    if (!finish_with_.has_value() || finish_started_) return;
    finish_started_ = true;
    finish = finish_with_;
  }
  tsan::HandOver(this);
  Finish(*std::move(finish));  // after the lock: OnDone may delete the reactor at once
}

void IngestService::Reactor::OnCancel() {
  tsan::TakeOver(this);  // gRPC calls it on any of its threads
  InflightBudget::Waiter waiter = 0;
  {
    absl::MutexLock lock(&wait_mu_);
    cancelled_ = true;  // a wait that starts later ends at once
    waiter = waiter_;
  }
  // Outside the lock: cancelling may grant other streams their room, on this thread. When the grant won
  // the race, it reads on and the read fails instead.
  if (waiter == 0 || !service_.options_.inflight->Cancel(waiter)) return;
  {
    absl::MutexLock lock(&wait_mu_);
    waiter_ = 0;
  }
  RunJob(false, nullptr);  // the step of a read that failed: the session ends
}

// The agent sends a sweep's capture after the one its stream waits to read: that one goes ahead too.
void IngestService::Reactor::PromoteWait() {
  InflightBudget::Waiter waiter = 0;
  {
    absl::MutexLock lock(&wait_mu_);
    if (waiter_ == 0) return;
    waiter = waiter_;
    waiting_urgent_ = true;
  }
  // Outside the lock: the promotion may grant it, and the grant takes the lock.
  service_.options_.inflight->Promote(waiter);
}

void IngestService::Reactor::FinishWhenWritten(grpc::Status status) {
  {
    absl::MutexLock lock(&write_mu_);
    finish_with_ = status;
    if (writing_) return;  // OnWriteDone finishes
    finish_started_ = true;
  }
  tsan::HandOver(this);
  Finish(std::move(status));
}

void IngestService::Reactor::OnDone() {
  tsan::TakeOver(this);
  // Released under the locks the last job and write took, so ThreadSanitizer sees them end first.
  {
    absl::MutexLock lock(&job_mu_);
    agent_.reset();
    session_.reset();
    lease_.reset();
    hello_wait_.reset();
    incoming_.Clear();
  }
  {
    absl::MutexLock lock(&write_mu_);
    writes_.clear();
  }
  delete this;
}

}  // namespace memfleet::server
