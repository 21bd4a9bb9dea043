#include "server/ingest/capture_ingestor.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "proto/capture_codec.h"
#include "proto/capture_id.h"
#include "accounting/account.h"
#include "capture/capture_header.h"
#include "report/report_json.h"
#include "server/fleet/capture_labels.h"
#include "server/core/clock.h"
#include "server/core/validation.h"

namespace memfleet::server {

v1::ServerMessage MakeRejected(const std::string& capture_id, absl::StatusCode code, const std::string& message,
                               bool retry) {
  v1::ServerMessage m;
  v1::CaptureRejected* r = m.mutable_rejected();
  r->set_capture_id(capture_id);
  r->set_code(static_cast<int32_t>(code));
  r->set_message(message);
  r->set_retry(retry);
  return m;
}

CaptureIngestor::CaptureIngestor(storage::CaptureStore& store, SweepCoordinator* sweeps,
                                 std::function<std::string()> now, DeltaOptions delta)
    : store_(store),
      sweeps_(sweeps),
      now_(now ? std::move(now) : std::function<std::string()>(NowRfc3339)),
      keyframes_(std::move(delta), &store) {}

v1::ServerMessage CaptureIngestor::Ack(const std::string& device_id, const std::string& capture_id,
                                       const std::string& sweep_id, bool duplicate) {
  if (sweeps_ != nullptr) sweeps_->OnStored(sweep_id, device_id, capture_id);
  v1::ServerMessage m;
  m.mutable_ack()->set_capture_id(capture_id);
  m.mutable_ack()->set_duplicate(duplicate);
  return m;
}

v1::ServerMessage CaptureIngestor::Reject(const std::string& device_id, const std::string& capture_id,
                                          const std::string& sweep_id, absl::StatusCode code,
                                          const std::string& message, bool retry) {
  LogLine(absl::StrCat("capture ", capture_id, " of ", device_id, " rejected", retry ? " (retry later)" : "", ": ",
                       message));
  if (sweeps_ != nullptr) sweeps_->OnFailed(sweep_id, device_id, capture_id, message);
  return MakeRejected(capture_id, code, message, retry);
}

CaptureIngestor::Prepared CaptureIngestor::Answered(v1::ServerMessage answer) {
  Prepared p;
  p.answer = std::move(answer);
  return p;
}

CaptureIngestor::Prepared CaptureIngestor::Prepare(AssembledCapture c) {
  // The stream's Hello is the device's identity: a capture whose own header names another device would
  // file one device's memory under another's history.
  std::string build_fingerprint;
  capture::Labels agent_labels;
  if (const std::string* header_text = c.capture.FileContent("capture.json")) {
    absl::StatusOr<capture::CaptureHeader> header = capture::ParseCaptureHeader(*header_text);
    if (header.ok() && !header->device_id.empty() && header->device_id != c.device_id) {
      return Answered(Reject(c, absl::StatusCode::kInvalidArgument,
                             absl::StrCat("capture.json names device \"", Snippet(header->device_id),
                                          "\" but this agent connected as \"", c.device_id, "\""),
                             /*retry=*/false));
    }
    // The build at capture time, not the device's current one: a spooled capture may predate an upgrade,
    // and `memfleet regressions` compares builds by the captures taken on them.
    // Labels that break the rules (only a hostile or broken agent sends them: the agent checks its flags)
    // are refused with the capture, never stored in part.
    if (header.ok() && header->labels_problem.has_value()) {
      // The problem's text is ours, its untrusted parts already snippets (capture/labels.cc).
      return Answered(Reject(c, absl::StatusCode::kInvalidArgument, *header->labels_problem, /*retry=*/false));
    }
    if (header.ok()) {
      agent_labels = header->labels;
      auto it = header->facts.find("build_fingerprint");
      // Held to the Hello's rules; one that breaks them is left unknown rather than stored as given.
      if (it != header->facts.end() && CheckText("build_fingerprint", it->second).ok()) {
        build_fingerprint = it->second;
      }
    }
  }

  // Capture ids are the global dedup key and name their device (proto/capture_id.h): a stream that could
  // write another device's id could pre-empt that device's capture, which would then be acked as a
  // duplicate and deleted from its spool.
  if (absl::Status s = wire::CheckCaptureIdOf(c.device_id, c.capture_id); !s.ok()) {
    return Answered(Reject(c, s.code(), std::string(s.message()), /*retry=*/false));
  }

  // Before the engine: a resent capture costs a lookup, not an accounting.
  absl::StatusOr<std::optional<std::string>> owner = store_.CaptureDevice(c.capture_id);
  if (!owner.ok()) {
    return Answered(Reject(c, absl::StatusCode::kUnavailable,
                           absl::StrCat("cannot read the store: ", owner.status().message()), /*retry=*/true));
  }
  if (owner->has_value()) {
    if (**owner == c.device_id) return Answered(Ack(c.device_id, c.capture_id, c.sweep_id, /*duplicate=*/true));
    // Only a database written before ids were checked holds this. Kept spooled: acking it would lose it.
    return Answered(Reject(c, absl::StatusCode::kAlreadyExists,
                           absl::StrCat("capture id \"", c.capture_id, "\" is already stored for device \"",
                                        Snippet(**owner), "\"; the capture stays in the agent's spool"),
                           /*retry=*/true));
  }

  Prepared p;
  p.nodes = c.capture.size();
  storage::CaptureRecord& record = p.record;
  record.report = accounting::Account(c.capture);
  // The server's facts win over the header's: the identity is the stream's, the time CaptureBegin's.
  record.report.device_id = c.device_id;
  record.report.captured_at = c.captured_at;
  for (const std::string& w : c.ingest_warnings) record.report.warnings.push_back(w);
  record.report_json = report::ReportToJson(record.report, /*indent=*/-1);
  DeltaKeyframes::StoredForm form =
      keyframes_.Encode(c.capture, c.capture_id, c.device_id, c.captured_at, kIngestCompressionLevel);
  if (form.blob.empty()) {
    return Answered(Reject(c, absl::StatusCode::kInternal, "could not compress the capture", /*retry=*/true));
  }
  record.raw_codec = std::move(form.codec);
  record.raw_blob = std::move(form.blob);
  record.raw_base = std::move(form.base);
  record.raw_bytes = c.capture.ContentBytes();
  record.capture_id = c.capture_id;
  record.device_id = c.device_id;
  record.captured_at = c.captured_at;
  record.received_at = now_();
  record.sweep_id = c.sweep_id;
  record.build_fingerprint = build_fingerprint;
  record.labels =
      MergeLabels(agent_labels, sweeps_ != nullptr && !c.sweep_id.empty() ? sweeps_->LabelsFor(c.sweep_id, c.device_id)
                                                                          : capture::Labels());
  return p;
}

size_t CaptureIngestor::HeldBytes(const Prepared& p) {
  const storage::CaptureRecord& r = p.record;
  return sizeof(p) + 2 * r.report_json.size() + r.raw_blob.size() + r.capture_id.size() + r.raw_base.size();
}

v1::ServerMessage CaptureIngestor::Committed(const Prepared& p, const absl::StatusOr<bool>& inserted) {
  if (p.answer.has_value()) return *p.answer;
  const storage::CaptureRecord& record = p.record;
  if (!inserted.ok()) {
    const bool taken = inserted.status().code() == absl::StatusCode::kAlreadyExists;
    return Reject(record.device_id, record.capture_id, record.sweep_id,
                  taken ? absl::StatusCode::kAlreadyExists : absl::StatusCode::kUnavailable,
                  taken ? std::string(inserted.status().message())
                        : absl::StrCat("could not store the capture: ", inserted.status().message()),
                  /*retry=*/true);
  }
  if (*inserted) {
    keyframes_.Stored(record.device_id, record.capture_id, record.raw_base, record.raw_blob.size());
    const report::Kb& total = record.report.device.total_kb;
    LogLine(absl::StrCat("stored capture ", record.capture_id, " of ", record.device_id, " (", p.nodes, " nodes, ",
                         record.raw_bytes, " bytes -> ", record.raw_blob.size(),
                         record.raw_base.empty() ? " compressed" : " as a delta", "; total ",
                         total.has_value() ? absl::StrCat(*total, " kB") : std::string("unknown"),
                         record.sweep_id.empty() ? "" : absl::StrCat("; sweep ", record.sweep_id),
                         record.labels.empty() ? "" : absl::StrCat("; labels ", DescribeLabels(record.labels)), ")"));
  }
  // false: the same capture arrived on another stream (an agent that reconnected) between the lookup and
  // the commit.
  return Ack(record.device_id, record.capture_id, record.sweep_id, /*duplicate=*/!*inserted);
}

v1::ServerMessage CaptureIngestor::Ingest(AssembledCapture capture) {
  Prepared p = Prepare(std::move(capture));
  if (p.answer.has_value()) return *std::move(p.answer);
  return Committed(p, store_.PutCapture(p.record));
}

}  // namespace memfleet::server
