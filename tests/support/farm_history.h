// Test support: a farm's history as the server stores it, made in seconds — several devices, a capture
// every 5 minutes for weeks, each device's every 64th capture whole (its keyframe) and the others deltas
// naming it, device totals that move from capture to capture — written straight into an SQLite file
// (SqlStore::PutCaptures), for the retention tests, whose histories must be far larger than the real
// ingest could make in a test's time. Header-only.
//
// What differs from the ingest: the engine does not run on each capture. Every report is the
// qcom-sm8450 sample's, with its device id, time, platform and total set per capture (its JSON filled into
// the sample's, cut where those go: serializing 13,000 reports was most of a retention test's time, minutes
// under ASan; the first of each platform is checked against ReportToJson); every raw blob is
// one of two real encodings (the sample whole, and a moved sample as a zstd delta of it), and every delta
// names its device's latest keyframe, as the ingest's do.
//
//   std::vector<testing::FarmCapture> plan = testing::PlanFarmHistory({{"farm-0", first_ms, 14 * 288}});
//   plan.back().total_kb = 1;                                  // shape it
//   ASSERT_TRUE(testing::WriteFarmHistory(store, plan).ok());
#ifndef MEMFLEET_TESTS_SUPPORT_FARM_HISTORY_H_
#define MEMFLEET_TESTS_SUPPORT_FARM_HISTORY_H_

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "accounting/account.h"
#include "common/utc_time.h"
#include "proto/capture_codec.h"
#include "report/report_json.h"
#include "server/ingest/delta_keyframes.h"
#include "storage/sqlite/sqlite_store.h"
#include "tests/support/moving_capture.h"
#include "tests/support/sample_capture.h"
#include "tests/support/test_paths.h"

namespace memfleet::testing {

inline constexpr int64_t kFarmIntervalMs = 5 * 60'000;

struct FarmDevice {
  std::string device_id;
  int64_t first_ms = 0;  // its first capture, UTC ms; then one every kFarmIntervalMs
  int captures = 0;
};

struct FarmCapture {
  std::string capture_id;
  std::string device_id;
  int64_t at_ms = 0;
  int64_t total_kb = 0;
  std::string keyframe_id;  // "" for a whole capture
  report::Platform platform = report::Platform::kQcom;
};

// Each device's captures, oldest first, devices one after the other. Totals move by a fixed pseudo-random
// step (so an hour's or a day's peak falls anywhere in it, and never ties); every `keyframe_every`-th
// capture of a device, its first included, is whole.
inline std::vector<FarmCapture> PlanFarmHistory(const std::vector<FarmDevice>& devices, int keyframe_every = 64) {
  std::vector<FarmCapture> plan;
  for (size_t d = 0; d < devices.size(); ++d) {
    std::string keyframe;
    for (int seq = 0; seq < devices[d].captures; ++seq) {
      FarmCapture c;
      c.device_id = devices[d].device_id;
      c.capture_id = CaptureId(c.device_id, seq);
      c.at_ms = devices[d].first_ms + seq * kFarmIntervalMs;
      c.total_kb = 2'000'000 + (static_cast<int64_t>(seq) * 7919 + static_cast<int64_t>(d) * 104'729) % 500'009;
      if (seq % keyframe_every == 0) {
        keyframe = c.capture_id;
      } else {
        c.keyframe_id = keyframe;
      }
      plan.push_back(std::move(c));
    }
  }
  return plan;
}

// A raw capture as the store keeps it: its codec and blob.
struct DeltaForm {
  std::string codec;
  std::string blob;
};

// A report's JSON with its device id, capture time and device total left open, filled per capture.
class FarmReportJson {
 public:
  FarmReportJson(report::Report report, report::Platform platform) {
    report.device_id = "farm-device-id-mark";
    report.captured_at = "farm-captured-at-mark";
    report.device.total_kb = kTotalMarkKb;
    report.platform = platform;
    const std::string json = report::ReportToJson(report, /*indent=*/-1);
    size_t from = 0;
    for (;;) {
      size_t at = std::string::npos;
      int hole = -1;
      for (int h = 0; h < kHoles; ++h) {
        const size_t found = json.find(kMarks[h], from);
        if (found < at) at = found, hole = h;
      }
      text_.push_back(json.substr(from, at == std::string::npos ? std::string::npos : at - from));
      if (hole < 0) break;
      holes_.push_back(hole);
      from = at + std::string(kMarks[hole]).size();
    }
  }

  std::string For(const std::string& device_id, const std::string& captured_at, int64_t total_kb) const {
    const std::string values[kHoles] = {nlohmann::json(device_id).dump(), nlohmann::json(captured_at).dump(),
                                        std::to_string(total_kb)};
    std::string out = text_[0];
    for (size_t i = 0; i < holes_.size(); ++i) absl::StrAppend(&out, values[holes_[i]], text_[i + 1]);
    return out;
  }

 private:
  enum Hole { kDeviceId, kCapturedAt, kTotal, kHoles };
  static constexpr int64_t kTotalMarkKb = 918'273'645'546'372;
  // As each appears in the JSON, quotes included: found nowhere else in the sample's report.
  static constexpr const char* kMarks[kHoles] = {"\"farm-device-id-mark\"", "\"farm-captured-at-mark\"",
                                                 "918273645546372"};
  std::vector<std::string> text_;  // the JSON between the holes: one more than holes_
  std::vector<int> holes_;
};

// Writes `plan` (each device's captures after its keyframes, as PlanFarmHistory orders them) with a device
// row per device, 2,000 captures a transaction.
inline absl::Status WriteFarmHistory(storage::SqlStore& store, const std::vector<FarmCapture>& plan) {
  const capture::Capture sample = LoadCapture(TestData("captures/qcom-sm8450/tree"));
  if (sample.size() == 0) return absl::NotFoundError("the qcom-sm8450 sample did not load");
  // The two raw blobs every capture is stored as: the sample whole (a keyframe), a moved sample against it.
  DeltaForm whole;
  whole.codec = wire::kStoredCodec;
  whole.blob = wire::EncodeStoredCapture(sample, "farm-key", "farm", "2026-11-30T08:00:00.000Z", 3);
  absl::StatusOr<std::string> whole_bytes = wire::DecompressStoredCapture(wire::kStoredCodec, whole.blob);
  if (!whole_bytes.ok()) return whole_bytes.status();
  const int level = server::DeltaOptions{}.compression_level;
  absl::StatusOr<std::unique_ptr<const wire::DeltaKeyframe>> keyframe =
      wire::DeltaKeyframe::Create(*whole_bytes, level);
  if (!keyframe.ok()) return keyframe.status();
  DeltaForm delta;
  delta.codec = wire::kDeltaCodec;
  delta.blob =
      wire::EncodeStoredCaptureDelta(Later(sample, 5), "farm-delta", "farm", "2026-11-30T08:05:00.000Z", **keyframe);
  if (whole.blob.empty() || delta.blob.empty()) return absl::InternalError("the sample did not encode as a delta");
  const report::Report sample_report = accounting::Account(sample);
  std::map<report::Platform, FarmReportJson> report_json;

  std::set<std::string> devices;
  std::vector<storage::CaptureRecord> batch;
  for (size_t i = 0; i < plan.size(); ++i) {
    const FarmCapture& f = plan[i];
    if (devices.insert(f.device_id).second) {
      storage::DeviceRecord device;
      device.device_id = f.device_id;
      device.model = "Xiaomi 12";
      device.soc = "sm8450";
      if (absl::Status s = store.UpsertDevice(device); !s.ok()) return s;
    }
    storage::CaptureRecord c;
    c.capture_id = f.capture_id;
    c.device_id = f.device_id;
    c.captured_at = FormatUtcMillis(std::chrono::system_clock::time_point(std::chrono::milliseconds(f.at_ms)));
    c.received_at = c.captured_at;
    const DeltaForm& form = f.keyframe_id.empty() ? whole : delta;
    c.raw_codec = form.codec;
    c.raw_blob = form.blob;
    c.raw_base = f.keyframe_id;
    c.raw_bytes = sample.ContentBytes();
    c.report = sample_report;
    c.report.device_id = f.device_id;
    c.report.captured_at = c.captured_at;
    c.report.platform = f.platform;
    c.report.device.total_kb = f.total_kb;
    auto json = report_json.find(f.platform);
    const bool first_of_platform = json == report_json.end();
    if (first_of_platform) json = report_json.emplace(f.platform, FarmReportJson(sample_report, f.platform)).first;
    c.report_json = json->second.For(f.device_id, c.captured_at, f.total_kb);
    if (first_of_platform && c.report_json != report::ReportToJson(c.report, /*indent=*/-1)) {
      return absl::InternalError("the filled report JSON differs from ReportToJson's");
    }
    batch.push_back(std::move(c));
    if (batch.size() == 2000 || i + 1 == plan.size()) {
      absl::StatusOr<std::vector<bool>> inserted = store.PutCaptures(batch);
      if (!inserted.ok()) return inserted.status();
      const size_t stored = static_cast<size_t>(std::count(inserted->begin(), inserted->end(), true));
      if (stored != batch.size())
        return absl::InternalError(absl::StrCat(batch.size() - stored, " captures not stored"));
      batch.clear();
    }
  }
  return absl::OkStatus();
}

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_FARM_HISTORY_H_
