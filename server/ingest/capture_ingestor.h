// CaptureIngestor: what happens to one assembled capture on a worker thread — check it belongs to the
// stream's device, deduplicate, run the engine, store the raw capture (compressed) and the report, and
// answer with the message the agent gets: CaptureAck only after the store committed, CaptureRejected
// otherwise (retry=true when the store failed, so the agent keeps it spooled).
//
//   CaptureIngestor ingestor(store, &sweeps);
//   v1::ServerMessage answer = ingestor.Ingest(std::move(assembled));   // ack or rejected
//
// Thread-safe (the store serializes writes); records sweep state changes in the coordinator.
#ifndef MEMFLEET_SERVER_INGEST_CAPTURE_INGESTOR_H_
#define MEMFLEET_SERVER_INGEST_CAPTURE_INGESTOR_H_

#include <functional>
#include <string>
#include <vector>

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

  v1::ServerMessage Ingest(AssembledCapture capture);

 private:
  v1::ServerMessage Ack(const AssembledCapture& c, bool duplicate);
  v1::ServerMessage Reject(const AssembledCapture& c, absl::StatusCode code, const std::string& message, bool retry);

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
