// What a store answered for a device's history before retention ran (its captures, their reports and device
// totals, its device and process trends), so that a test can say what must read back the same after it.
//
//   testing::HistoryBefore before;
//   ASSERT_NO_FATAL_FAILURE(testing::ReadHistoryBefore(*store, "farm-0", {"system_server"}, before));
//   ... retention ...
//   testing::ExpectSameTrend(testing::DeviceTrend(*store, "farm-0"), before.device_trend, "device total_kb");
#ifndef MEMFLEET_TESTS_SUPPORT_HISTORY_BEFORE_H_
#define MEMFLEET_TESTS_SUPPORT_HISTORY_BEFORE_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/utc_time.h"
#include "storage/sql_store.h"

namespace memfleet::testing {

struct CaptureBefore {
  std::string captured_at;
  int64_t at_ms = 0;
  std::string keyframe_id;  // "" for a whole capture
  bool raw_dropped = false;
  std::string report_json;
  std::optional<int64_t> total_kb;
};

struct HistoryBefore {
  std::map<std::string, CaptureBefore> captures;                           // by capture id
  std::vector<storage::HistoryRow> device_trend;                           // total_kb
  std::map<std::string, std::vector<storage::HistoryRow>> process_trends;  // pss_kb, by process
};

inline std::vector<storage::HistoryRow> DeviceTrend(storage::SqlStore& store, const std::string& device) {
  absl::StatusOr<std::vector<storage::HistoryRow>> rows = store.DeviceHistory(device, "total_kb", "", 0);
  EXPECT_TRUE(rows.ok()) << rows.status();
  return rows.ok() ? *rows : std::vector<storage::HistoryRow>();
}

inline std::vector<storage::HistoryRow> ProcessTrend(storage::SqlStore& store, const std::string& device,
                                                     const std::string& process) {
  absl::StatusOr<std::vector<storage::HistoryRow>> rows = store.ProcessHistory(device, process, "pss_kb", "", 0);
  EXPECT_TRUE(rows.ok()) << rows.status();
  return rows.ok() ? *rows : std::vector<storage::HistoryRow>();
}

// Fails the test when the store cannot answer for one of the device's captures.
inline void ReadHistoryBefore(storage::SqlStore& store, const std::string& device,
                              const std::vector<std::string>& processes, HistoryBefore& before) {
  absl::StatusOr<std::vector<storage::RetentionRow>> rows = store.RetentionRows(device);
  ASSERT_TRUE(rows.ok()) << rows.status();
  for (const storage::RetentionRow& r : *rows) {
    CaptureBefore& b = before.captures[r.capture_id];
    b.captured_at = r.captured_at;
    std::optional<int64_t> at = UtcMillisOf(r.captured_at);
    ASSERT_TRUE(at.has_value()) << r.captured_at;
    b.at_ms = *at;
    b.keyframe_id = r.keyframe_id;
    b.raw_dropped = r.raw_dropped;
    absl::StatusOr<std::optional<storage::StoredReport>> report = store.GetReportByCapture(r.capture_id);
    ASSERT_TRUE(report.ok() && report->has_value()) << r.capture_id;
    b.report_json = (*report)->report_json;
    absl::StatusOr<std::optional<int64_t>> total = store.CaptureFigure(r.capture_id, "total_kb", "");
    ASSERT_TRUE(total.ok() && total->has_value()) << r.capture_id;
    b.total_kb = *total;
  }
  before.device_trend = DeviceTrend(store, device);
  for (const std::string& process : processes) before.process_trends[process] = ProcessTrend(store, device, process);
}

// The same rows, in the same order: capture, time, pid and value.
inline void ExpectSameTrend(const std::vector<storage::HistoryRow>& got, const std::vector<storage::HistoryRow>& want,
                            const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].capture_id, want[i].capture_id) << what << " row " << i;
    EXPECT_EQ(got[i].captured_at, want[i].captured_at) << what << " row " << i;
    EXPECT_EQ(got[i].pid, want[i].pid) << what << " row " << i;
    EXPECT_EQ(got[i].value_kb, want[i].value_kb) << what << " row " << i;
  }
}

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_HISTORY_BEFORE_H_
