// CaptureIngestor: what happens to one assembled capture — check it belongs to the stream's device,
// deduplicate, run the engine, encode the raw capture (a delta of the device's keyframe, or whole), store
// it with its report, and answer with the message the agent gets: CaptureAck only after the store
// committed, CaptureRejected otherwise (retry=true when the store failed, so the agent keeps it spooled).
// The work is in two halves, so that the store's writer does only the commit: Prepare (checks, engine,
// encoding) on any worker, Committed (keyframe bookkeeping, sweep state, the answer) once the store
// answered for the record — one capture per transaction (Ingest) or many (CaptureWriter's group commit).
//
//   CaptureIngestor ingestor(store, &sweeps);
//   v1::ServerMessage answer = ingestor.Ingest(std::move(assembled));   // both halves, one transaction
//
//   CaptureIngestor::Prepared p = ingestor.Prepare(std::move(assembled));
//   if (!p.answer) answer = ingestor.Committed(p, store.PutCaptures({p.record}) ...);
//
// Thread-safe (the store serializes writes); records sweep state changes in the coordinator.
#ifndef MEMFLEET_SERVER_INGEST_CAPTURE_INGESTOR_H_
#define MEMFLEET_SERVER_INGEST_CAPTURE_INGESTOR_H_

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "memfleet/v1/agent_service.pb.h"
#include "capture/capture.h"
#include "server/ingest/delta_keyframes.h"
#include "server/fleet/sweep_coordinator.h"
#include "storage/capture_store.h"

namespace memfleet::server {

struct AssembledCapture {
  std::string device_id;    // from the stream's Hello
  std::string capture_id;   // from CaptureBegin
  std::string captured_at;  // from CaptureBegin, normalized RFC 3339 UTC
  std::string sweep_id;     // the sweep it answers (SweepCoordinator::ClaimAnswer); "" for a periodic capture
  capture::Capture capture;
  std::vector<std::string> ingest_warnings;  // added to the report's warnings (e.g. kUnverifiedCaptureWarning)
};

// The report warning of a capture that arrived without a digest (an agent older than CaptureEnd's
// capture_sha256): accepted, so that servers can be upgraded before agents, but not verified end to end.
inline constexpr char kUnverifiedCaptureWarning[] =
    "capture: the agent sent no capture_sha256 (an older agent); its content was not verified end to end";

// zstd level of the stored raw capture. The ack waits for it, and at level 9 it was half of the server's
// CPU per capture (bench/ingest_benchmark.cc breakdown) for blobs only ~10% smaller than level 3's; the
// size is won back by storing most captures as deltas (delta_keyframes.h, docs/performance.md "Storage").
inline constexpr int kIngestCompressionLevel = 3;

class CaptureIngestor {
 public:
  // `sweeps` may be null (no sweep tracking); `now` null: NowRfc3339. `delta`: how raw captures are
  // stored as deltas against a recent whole capture of their device (delta_keyframes.h).
  CaptureIngestor(storage::CaptureStore& store, SweepCoordinator* sweeps, std::function<std::string()> now = nullptr,
                  DeltaOptions delta = {});

  const DeltaKeyframes& keyframes() const { return keyframes_; }

  // A capture ready for the store, or already answered.
  struct Prepared {
    std::optional<v1::ServerMessage> answer;  // set: nothing to store (a duplicate's ack, a rejection)
    storage::CaptureRecord record;            // else: what to store
    size_t nodes = 0;                         // for the log line
  };
  // Everything before the commit: the checks, the duplicate lookup, the engine and the stored form. The
  // capture's nodes are freed when it returns; the record keeps only what is stored.
  Prepared Prepare(AssembledCapture capture);
  // What a prepared capture holds until its commit (its report twice, as JSON and parsed, and its blob),
  // for the in-flight budget.
  static size_t HeldBytes(const Prepared& prepared);
  // After the store answered for `prepared.record`: `inserted` is what PutCapture(s) said of it.
  v1::ServerMessage Committed(const Prepared& prepared, const absl::StatusOr<bool>& inserted);
  // Prepare, PutCapture (one transaction) and Committed on this thread.
  v1::ServerMessage Ingest(AssembledCapture capture);

 private:
  v1::ServerMessage Ack(const std::string& device_id, const std::string& capture_id, const std::string& sweep_id,
                        bool duplicate);
  v1::ServerMessage Reject(const std::string& device_id, const std::string& capture_id, const std::string& sweep_id,
                           absl::StatusCode code, const std::string& message, bool retry);
  v1::ServerMessage Reject(const AssembledCapture& c, absl::StatusCode code, const std::string& message, bool retry) {
    return Reject(c.device_id, c.capture_id, c.sweep_id, code, message, retry);
  }
  static Prepared Answered(v1::ServerMessage answer);

  storage::CaptureStore& store_;
  SweepCoordinator* sweeps_;
  std::function<std::string()> now_;
  DeltaKeyframes keyframes_;
};

// CaptureRejected for `capture_id`, as the stream and the ingestor send it.
v1::ServerMessage MakeRejected(const std::string& capture_id, absl::StatusCode code, const std::string& message,
                               bool retry);

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_INGEST_CAPTURE_INGESTOR_H_
