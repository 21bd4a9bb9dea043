// Test support: a device history made through the real ingest (CaptureIngestor: the engine, deltas
// against keyframes), for suites and benchmarks that need many stored captures of several devices.
// Header-only.
//
//   testing::IngestHistory(store, /*devices=*/3, /*per_device=*/10, /*keyframe_every=*/4);   // bench-0..2
//   testing::IngestMoved(ingestor, sample_header, Churned(sample, seq, kEverything), "lab-1", seq, at);
#ifndef MEMFLEET_TESTS_SUPPORT_INGESTED_HISTORY_H_
#define MEMFLEET_TESTS_SUPPORT_INGESTED_HISTORY_H_

#include <cstdio>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "server/ingest/capture_ingestor.h"
#include "tests/support/moving_capture.h"
#include "tests/support/sample_capture.h"
#include "tests/support/test_paths.h"

namespace memfleet::testing {

// `moved` (a sample capture, moved as the test needs) stored through `ingestor` as `device`'s capture `seq`
// (id CaptureId(device, seq)) taken at `captured_at`, its header (`sample_header`, the sample's
// capture.json) naming the device and time as its agent's would. Whether it was acked.
inline bool IngestMoved(server::CaptureIngestor& ingestor, const std::string& sample_header, capture::Capture moved,
                        const std::string& device, int seq, const std::string& captured_at) {
  server::AssembledCapture a;
  a.device_id = device;
  a.capture_id = CaptureId(device, seq);
  a.captured_at = captured_at;
  a.capture = std::move(moved);
  nlohmann::json header = nlohmann::json::parse(sample_header);
  header["device_id"] = device;
  header["captured_at"] = captured_at;
  a.capture.AddFile("capture.json", header.dump());
  return ingestor.Ingest(std::move(a)).has_ack();
}

// Device "bench-D" for D in [0, devices): per_device captures of the qcom-sm8450 sample a minute apart
// from 2026-11-30T08:00, each moved as Later(sample, seq + D), ids CaptureId(device, seq). An error
// naming the capture when one is not acked.
inline absl::Status IngestHistory(storage::CaptureStore& store, int devices, int per_device, uint32_t keyframe_every) {
  capture::Capture sample = LoadCapture(TestData("captures/qcom-sm8450/tree").c_str());
  const std::string* sample_header = sample.FileContent("capture.json");
  if (sample_header == nullptr) return absl::NotFoundError("the qcom-sm8450 sample has no capture.json");
  server::DeltaOptions delta;
  delta.keyframe_every = keyframe_every;
  server::CaptureIngestor ingestor(store, nullptr, nullptr, delta);
  for (int seq = 0; seq < per_device; ++seq) {
    for (int d = 0; d < devices; ++d) {
      server::AssembledCapture a;
      a.device_id = absl::StrCat("bench-", d);
      a.capture_id = CaptureId(a.device_id, seq);
      char at[48];
      std::snprintf(at, sizeof(at), "2026-11-30T%02d:%02d:00.000Z", 8 + seq / 60, seq % 60);
      a.captured_at = at;
      a.capture = Later(sample, seq + d);
      nlohmann::json header = nlohmann::json::parse(*sample_header);
      header["device_id"] = a.device_id;
      header["captured_at"] = at;
      a.capture.AddFile("capture.json", header.dump());
      const std::string id = a.capture_id;
      if (!ingestor.Ingest(std::move(a)).has_ack())
        return absl::InternalError(absl::StrCat("capture ", id, " not acked"));
    }
  }
  return absl::OkStatus();
}

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_INGESTED_HISTORY_H_
