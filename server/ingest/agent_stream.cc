#include "server/ingest/agent_stream.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "proto/capture_digest.h"
#include "server/core/clock.h"
#include "server/ingest/clock_skew.h"
#include "server/core/validation.h"

namespace memfleet::server {
namespace {

void CountAnswer(metrics::ServerCounters* counters, const v1::ServerMessage& answer,
                 std::chrono::steady_clock::duration took) {
  if (counters == nullptr) return;
  if (answer.has_ack()) {
    answer.ack().duplicate() ? counters->CountDuplicate() : counters->CountStored();
  } else {
    counters->CountRejected();
  }
  counters->ObserveIngestLatency(std::chrono::duration<double>(took).count());
}

}  // namespace

void PendingJobs::Add() {
  absl::MutexLock lock(&mu_);
  ++count_;
}

void PendingJobs::Done() {
  absl::MutexLock lock(&mu_);
  --count_;
}

void PendingJobs::WaitIdle() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](int* count) { return *count == 0; }, &count_));
}

AgentStream::AgentStream(AgentStreamDeps deps, std::shared_ptr<AgentSession> session, storage::DeviceRecord device,
                         security::Principal principal)
    : deps_(deps),
      session_(std::move(session)),
      device_(std::move(device)),
      principal_(std::move(principal)),
      assembler_(deps.options.limits) {}

absl::Status AgentStream::OnMessage(const v1::AgentMessage& message) {
  switch (message.msg_case()) {
    case v1::AgentMessage::kBegin:
      return OnBegin(message.begin());
    case v1::AgentMessage::kChunk:
      return OnChunk(message.chunk());
    case v1::AgentMessage::kEnd:
      return OnEnd(message.end());
    case v1::AgentMessage::kCommandFailed:
      OnCommandFailed(message.command_failed());
      return absl::OkStatus();
    case v1::AgentMessage::kHello:
      return absl::InvalidArgumentError("a second Hello on the same stream");
    case v1::AgentMessage::kDropped:
      OnDropped(message.dropped());
      return absl::OkStatus();
    case v1::AgentMessage::kHeartbeat:
    case v1::AgentMessage::MSG_NOT_SET:  // also a newer agent's message this server does not know
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

void AgentStream::Finish() {
  if (assembler_.active() && deps_.sweeps != nullptr) {
    deps_.sweeps->OnFailed(current_.sweep_id, device_.device_id, current_.capture_id,
                           "the stream ended inside the capture");
  }
  lease_.Release();
  pending_->WaitIdle();
}

size_t AgentStream::UnreservedBytes() const {
  if (deps_.options.inflight == nullptr || !assembler_.active()) return 0;
  // What the Begin announced, or what arrived when its paths were longer than the typical.
  const size_t needed = std::max(InflightBytesOfCapture(announced_bytes_, announced_nodes_),
                                 InflightBytesOfHeld(assembler_.held_bytes()));
  return needed > lease_.bytes() ? needed - lease_.bytes() : 0;
}

void AgentStream::AddLease(InflightBudget::Lease lease) { lease_.Merge(std::move(lease)); }

absl::Status AgentStream::OnBegin(const v1::CaptureBegin& begin) {
  // A token revoked while its stream is open is refused at its next capture, not at reconnect.
  if (absl::Status s = deps_.authorizer.StillValid(principal_); !s.ok()) return s;
  if (deps_.options.agent_limits != nullptr) {
    if (absl::Status s = deps_.options.agent_limits->CountCapture(device_.device_id); !s.ok()) {
      current_ = AssembledCapture();
      current_.capture_id = begin.capture_id();
      Reject(absl::StatusCode::kResourceExhausted, std::string(s.message()), /*retry=*/true);
      return absl::ResourceExhaustedError(s.message());
    }
  }
  if (assembler_.active()) {
    Reject(absl::StatusCode::kAborted,
           absl::StrCat("capture ", current_.capture_id, " ended by the begin of ", Snippet(begin.capture_id())),
           /*retry=*/true);
  }
  current_ = AssembledCapture();
  current_.device_id = device_.device_id;
  current_.capture_id = begin.capture_id();
  lease_.Release();  // an earlier capture's, cut short
  announced_bytes_ = begin.content_bytes();
  announced_nodes_ = begin.node_count();
  if (absl::Status s = CheckBegin(begin); !s.ok()) {
    Reject(s.code(), std::string(s.message()), /*retry=*/false);
    return absl::OkStatus();
  }
  if (deps_.sweeps != nullptr) deps_.sweeps->OnCapturing(current_.sweep_id, device_.device_id, current_.capture_id);
  return absl::OkStatus();
}

absl::Status AgentStream::CheckBegin(const v1::CaptureBegin& begin) {
  if (absl::Status s = CheckCaptureId(begin.capture_id()); !s.ok()) return s;
  if (absl::Status s = CheckSweepId(begin.sweep_id()); !s.ok()) return s;
  // The agent only names a sweep: the coordinator says whether that sweep asked this device and this is
  // its one answer. Anything else is kept as a periodic capture, so no device can put its captures into
  // another team's sweep (its labels, `baseline check --sweep`, retention's pins) or jump the queue.
  if (!begin.sweep_id().empty()) {
    if (deps_.sweeps != nullptr && deps_.sweeps->ClaimAnswer(begin.sweep_id(), device_.device_id, begin.capture_id())) {
      current_.sweep_id = begin.sweep_id();
    } else {
      LogLine(absl::StrCat("capture ", Snippet(begin.capture_id()), " of ", device_.device_id,
                           " is not this device's answer to sweep ", begin.sweep_id(),
                           " (no such sweep asked it, or it answered already): stored as a periodic capture"));
    }
  }
  absl::StatusOr<std::string> at = CheckTime("captured_at", begin.captured_at());
  if (!at.ok()) return at.status();
  current_.captured_at = *at;
  if (absl::Status s = CheckNotAhead(current_.captured_at, deps_.options.now(), deps_.options.max_clock_skew);
      !s.ok()) {
    deps_.registry.CountFutureCapture(device_.device_id);
    return s;
  }
  return assembler_.Begin(begin);
}

absl::Status AgentStream::OnChunk(const v1::CaptureChunk& chunk) {
  if (!assembler_.active()) {
    if (!skip_id_.empty() && chunk.capture_id() == skip_id_) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("capture chunk of ", Snippet(chunk.capture_id()), " without its CaptureBegin"));
  }
  if (absl::Status s = assembler_.AddChunk(chunk); !s.ok()) Reject(s.code(), std::string(s.message()), false);
  return absl::OkStatus();
}

absl::Status AgentStream::OnEnd(const v1::CaptureEnd& end) {
  if (!assembler_.active()) {
    if (!skip_id_.empty() && end.capture_id() == skip_id_) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("capture end of ", Snippet(end.capture_id()), " without its CaptureBegin"));
  }
  absl::StatusOr<capture::Capture> capture = assembler_.Finish(end);
  if (!capture.ok()) {
    // A digest mismatch may be the wire's: the agent keeps the capture and resends it (a bounded number
    // of times). Every other mismatch is the sender's own and would repeat.
    Reject(capture.status().code(), std::string(capture.status().message()),
           /*retry=*/wire::IsDigestMismatch(capture.status()));
    return absl::OkStatus();
  }
  current_.capture = std::move(*capture);
  if (assembler_.digest_missing()) {
    LogLine(absl::StrCat("capture ", current_.capture_id, " of ", device_.device_id,
                         " has no capture_sha256 (an older agent): stored unverified"));
    current_.ingest_warnings.push_back(kUnverifiedCaptureWarning);
  }
  QueueCapture();
  return absl::OkStatus();
}

void AgentStream::QueueCapture() {
  // The capture's nodes go into Prepare; its lease stays with it until it is answered.
  auto lease = std::make_shared<InflightBudget::Lease>(std::move(lease_));
  const bool urgent = !current_.sweep_id.empty();
  AssembledCapture assembled = std::move(current_);
  current_ = AssembledCapture();
  const auto queued_at = std::chrono::steady_clock::now();
  // Owns what it uses (the session, the pending count), never the stream itself.
  auto answer = [session = session_, pending = pending_, lease, counters = deps_.options.counters,
                 queued_at](const v1::ServerMessage& message) {
    CountAnswer(counters, message, std::chrono::steady_clock::now() - queued_at);
    session->Write(message);
    lease->Release();
    pending->Done();
  };
  pending_->Add();
  CaptureIngestor::Prepared prepared = deps_.ingestor.Prepare(std::move(assembled));
  if (prepared.answer.has_value()) {
    answer(*prepared.answer);
    return;
  }
  if (deps_.writer == nullptr) {
    answer(deps_.ingestor.Committed(prepared, deps_.store.PutCapture(prepared.record)));
    return;
  }
  // Until its commit it holds only its record: the room of its nodes goes to the streams waiting for it.
  lease->ShrinkTo(CaptureIngestor::HeldBytes(prepared));
  const std::string capture_id = prepared.record.capture_id, sweep_id = prepared.record.sweep_id;
  if (!deps_.writer->Submit(std::move(prepared), urgent, answer)) {
    if (deps_.sweeps != nullptr) {
      deps_.sweeps->OnFailed(sweep_id, device_.device_id, capture_id, "the server is shutting down");
    }
    answer(MakeRejected(capture_id, absl::StatusCode::kUnavailable, "the server is shutting down", /*retry=*/true));
  }
}

void AgentStream::OnDropped(const v1::DroppedReport& dropped) {
  // Recorded as at Hello (added to the device's count) before it is confirmed: a confirmation lost on the
  // way makes the agent report the drops again, which overstates a loss rather than hides it.
  storage::DeviceRecord update = device_;
  update.last_seen_at = deps_.options.now();
  update.dropped_captures = dropped.dropped_captures();
  if (absl::Status s = deps_.store.UpsertDevice(update); !s.ok()) {
    LogLine(absl::StrCat("agent ", device_.device_id, ": cannot record ", update.dropped_captures,
                         " dropped captures (", s.message(), "); its next Hello reports them"));
    return;
  }
  LogLine(absl::StrCat("agent ", device_.device_id, " dropped ", update.dropped_captures, " captures from its spool"));
  v1::ServerMessage recorded;
  recorded.mutable_dropped_recorded()->set_dropped_captures(update.dropped_captures);
  session_->Write(recorded);
}

void AgentStream::OnCommandFailed(const v1::CommandFailed& failed) {
  if (deps_.sweeps == nullptr) return;
  deps_.sweeps->OnFailed(failed.sweep_id(), device_.device_id, "",
                         absl::StrCat("agent: ", Snippet(failed.message(), 400)));
}

void AgentStream::Reject(absl::StatusCode code, const std::string& message, bool retry) {
  if (deps_.options.counters != nullptr) deps_.options.counters->CountRejected();
  LogLine(absl::StrCat("capture ", Snippet(current_.capture_id), " of ", device_.device_id, " rejected: ", message));
  if (deps_.sweeps != nullptr)
    deps_.sweeps->OnFailed(current_.sweep_id, device_.device_id, current_.capture_id, message);
  session_->Write(MakeRejected(current_.capture_id, code, message, retry));
  skip_id_ = current_.capture_id;
  assembler_ = wire::CaptureAssembler(deps_.options.limits);
  lease_.Release();
}

}  // namespace memfleet::server
