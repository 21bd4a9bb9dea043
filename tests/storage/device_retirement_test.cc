// Retiring a device (`memfleet devices retire`, storage/capture_store.h): the device row says when, its
// history stays, its agent's next Hello makes it active again; and purging it deletes its history in
// batches, every delta before its keyframe, and then the device, leaving every other device as it was.
// On both backends (SQLite, PostgreSQL).
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "report/report_json.h"
#include "storage/store.h"
#include "tests/support/store_backends.h"

namespace memfleet::storage {
namespace {

DeviceRecord Hello(const std::string& device_id, const std::string& at) {
  DeviceRecord d;
  d.device_id = device_id;
  d.model = "Pixel 8";
  d.last_seen_at = at;
  return d;
}

// Capture `seq` of the device at 08:00 + seq minutes: a keyframe (raw_base "") or a delta of one.
CaptureRecord CaptureOf(const std::string& device_id, int seq, const std::string& raw_base) {
  CaptureRecord c;
  c.device_id = device_id;
  c.capture_id = device_id + "-" + std::to_string(seq);
  const int minutes = 8 * 60 + seq;
  char at[40];
  snprintf(at, sizeof at, "2026-11-30T%02d:%02d:00.000Z", minutes / 60 % 24, minutes % 60);
  c.captured_at = at;
  c.raw_codec = raw_base.empty() ? "zstd+proto" : "zstd-delta+proto";
  c.raw_blob = "raw";
  c.raw_bytes = 3;
  c.raw_base = raw_base;
  c.report.platform = report::Platform::kQcom;
  c.report.device_id = device_id;
  c.report.captured_at = c.captured_at;
  c.report.device.total_kb = 3'000'000 + seq;
  report::ProcessReport& p = c.report.processes[1000];
  p.pid = 1000;
  p.name = "surfaceflinger";
  p.total_kb = 20'000 + seq;
  c.report_json = report::ReportToJson(c.report, -1);
  c.labels.sweep = {{"rack", "3"}};
  return c;
}

class DeviceRetirementTest : public testing::StoreOnBackendTest {
 protected:
  // `keyframes` keyframes, each followed by `deltas` deltas of it.
  void StoreHistory(const std::string& device_id, int keyframes, int deltas) {
    ASSERT_TRUE(store_->UpsertDevice(Hello(device_id, "2026-11-30T08:00:00Z")).ok());
    int seq = 0;
    for (int k = 0; k < keyframes; ++k) {
      const std::string keyframe = device_id + "-" + std::to_string(seq);
      absl::StatusOr<bool> stored = store_->PutCapture(CaptureOf(device_id, seq++, ""));
      ASSERT_TRUE(stored.ok() && *stored) << stored.status();
      for (int d = 0; d < deltas; ++d) {
        stored = store_->PutCapture(CaptureOf(device_id, seq++, keyframe));
        ASSERT_TRUE(stored.ok() && *stored) << stored.status();
      }
    }
  }

  std::optional<DeviceRecord> Device(const std::string& device_id) {
    absl::StatusOr<std::optional<DeviceRecord>> d = store_->GetDevice(device_id);
    EXPECT_TRUE(d.ok()) << d.status();
    return d.ok() ? *d : std::nullopt;
  }

  DeviceSummaryRow Listed(const std::string& device_id) {
    absl::StatusOr<std::vector<DeviceSummaryRow>> rows = store_->ListDevices();
    EXPECT_TRUE(rows.ok()) << rows.status();
    for (const DeviceSummaryRow& row : rows.ok() ? *rows : std::vector<DeviceSummaryRow>()) {
      if (row.device.device_id == device_id) return row;
    }
    return {};
  }
};

TEST_P(DeviceRetirementTest, RetiredKeepsItsHistoryAndItsFirstTimeUntilItsAgentSaysHello) {
  StoreHistory("lab-a-07", 1, 2);
  absl::StatusOr<bool> retired = store_->RetireDevice("lab-a-07", "2026-12-01T09:00:00Z");
  ASSERT_TRUE(retired.ok()) << retired.status();
  EXPECT_TRUE(*retired);
  // Again later: the first time stays.
  ASSERT_TRUE(store_->RetireDevice("lab-a-07", "2026-12-02T09:00:00Z").ok());
  Reopen();
  ASSERT_TRUE(Device("lab-a-07").has_value());
  EXPECT_EQ(Device("lab-a-07")->retired_at, "2026-12-01T09:00:00.000Z");
  const DeviceSummaryRow row = Listed("lab-a-07");
  EXPECT_EQ(row.device.retired_at, "2026-12-01T09:00:00.000Z");
  EXPECT_EQ(row.capture_count, 3u) << "retiring deletes nothing";
  absl::StatusOr<std::optional<StoredReport>> latest = store_->GetReport("lab-a-07", "");
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->capture_id, "lab-a-07-2");

  // Its agent is back.
  ASSERT_TRUE(store_->UpsertDevice(Hello("lab-a-07", "2026-12-03T09:00:00Z")).ok());
  EXPECT_EQ(Device("lab-a-07")->retired_at, "");
  EXPECT_FALSE(Listed("lab-a-07").device.retired());
}

TEST_P(DeviceRetirementTest, AnUnknownDeviceIsNotRetired) {
  absl::StatusOr<bool> retired = store_->RetireDevice("no-such-phone", "2026-12-01T09:00:00Z");
  ASSERT_TRUE(retired.ok()) << retired.status();
  EXPECT_FALSE(*retired);
  EXPECT_FALSE(Device("no-such-phone").has_value());
  EXPECT_FALSE(store_->RetireDevice("lab-a-07", "not a time").ok());
}

// 2 keyframes with 130 deltas each: batches of 100 cross keyframe groups, and a keyframe would go in the
// first batches if the order were by time.
TEST_P(DeviceRetirementTest, PurgeDeletesEveryCaptureDeltasFirstThenTheDeviceAndNothingElse) {
  StoreHistory("gone-1", 2, 130);
  StoreHistory("stays-1", 1, 3);
  absl::StatusOr<Store::Stats> before = store_->GetStats();
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_EQ(before->captures, 262u + 4u);

  absl::StatusOr<uint64_t> purged = store_->PurgeDevice("gone-1");
  ASSERT_TRUE(purged.ok()) << purged.status();
  EXPECT_EQ(*purged, 262u);
  Reopen();
  EXPECT_FALSE(Device("gone-1").has_value());
  absl::StatusOr<std::optional<StoredReport>> report = store_->GetReportByCapture("gone-1-1");
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->has_value());
  absl::StatusOr<std::vector<LabelledCapture>> labelled = store_->LabelledCaptures(LabelSet{{{"rack", "3"}}, {}});
  ASSERT_TRUE(labelled.ok()) << labelled.status();
  ASSERT_EQ(labelled->size(), 4u);
  for (const LabelledCapture& c : *labelled) EXPECT_EQ(c.device_id, "stays-1");
  absl::StatusOr<Store::Stats> after = store_->GetStats();
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->captures, 4u);
  EXPECT_EQ(after->process_rows, 4u);
  absl::StatusOr<std::vector<HistoryRow>> trend =
      store_->ProcessHistory("stays-1", "surfaceflinger", "total_kb", "", 0);
  ASSERT_TRUE(trend.ok()) << trend.status();
  ASSERT_EQ(trend->size(), 4u);
  EXPECT_EQ(trend->back().value_kb, 20'003);
  EXPECT_EQ(Listed("stays-1").capture_count, 4u);

  // The same id coming back starts a new history.
  StoreHistory("gone-1", 1, 1);
  EXPECT_EQ(Listed("gone-1").capture_count, 2u);
  absl::StatusOr<std::vector<HistoryRow>> fresh = store_->ProcessHistory("gone-1", "surfaceflinger", "total_kb", "", 0);
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_EQ(fresh->size(), 2u);
}

TEST_P(DeviceRetirementTest, PurgingADeviceWithoutCapturesRemovesItsRow) {
  ASSERT_TRUE(store_->UpsertDevice(Hello("empty-1", "2026-11-30T08:00:00Z")).ok());
  absl::StatusOr<uint64_t> purged = store_->PurgeDevice("empty-1");
  ASSERT_TRUE(purged.ok()) << purged.status();
  EXPECT_EQ(*purged, 0u);
  EXPECT_FALSE(Device("empty-1").has_value());
}

INSTANTIATE_TEST_SUITE_P(Backends, DeviceRetirementTest, testing::kBothBackends, testing::StoreBackendName);

}  // namespace
}  // namespace memfleet::storage
