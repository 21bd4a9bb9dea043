// EXPLAIN QUERY PLAN of the exact statements the store (storage/sql_store.h) runs on SQLite for its hot queries
// (ExplainHotQuery), on a file database shaped like a fleet — many devices, many captures per device, many processes
// per capture — both as a fresh server leaves it (no statistics) and after ANALYZE, when SQLite's planner weighs the
// indexes by real row counts and could prefer a scan. The fleet queries must stay one index probe per device, the trend
// one index range already in time order (no sort), at any database size: that is what keeps them at milliseconds on 100
// devices x 30 days (bench/query_benchmark.cc).
#include <sqlite3.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "report/report.h"
#include "storage/sqlite/schema.h"
#include "storage/sqlite/sqlite_db.h"
#include "storage/sqlite/sqlite_store.h"
#include "tests/support/subprocess.h"

namespace memfleet::storage {
namespace {

constexpr char kLatestReportIndex[] = "device_reports_by_device_time";
constexpr char kCapturesIndex[] = "captures_by_device_time";

constexpr int kDevices = 12;
constexpr int kCapturesPerDevice = 60;
constexpr int kProcesses = 20;
constexpr int kSweepEvery = 20;

std::string Join(const std::vector<std::string>& plan) {
  std::string out;
  for (const std::string& l : plan) out += l + "\n";
  return out;
}

bool Mentions(const std::vector<std::string>& plan, const std::string& text) {
  return std::any_of(plan.begin(), plan.end(), [&](const std::string& l) { return l.find(text) != std::string::npos; });
}

bool UsesIndex(const std::vector<std::string>& plan, const std::string& index) {
  return Mentions(plan, "USING INDEX " + index) || Mentions(plan, "USING COVERING INDEX " + index);
}

// Plan rows that read a whole table. `devices AS d` is the one allowed (one row per device, not per report).
std::vector<std::string> FullScans(const std::vector<std::string>& plan) {
  std::vector<std::string> out;
  for (const std::string& l : plan) {
    if (l.rfind("SCAN", 0) == 0 && l.rfind("SCAN d", 0) != 0) out.push_back(l);
  }
  return out;
}

// Plan rows that sort a whole range. "USE TEMP B-TREE FOR RIGHT PART OF ORDER BY" is allowed: since schema
// version 16 the (device, time) indexes end at captured_at, and only rows of one captured_at (a tie) are
// sorted by capture_id, as the range goes.
std::vector<std::string> Sorts(const std::vector<std::string>& plan) {
  std::vector<std::string> out;
  for (const std::string& l : plan) {
    if (l.find("TEMP B-TREE") != std::string::npos && l != "USE TEMP B-TREE FOR RIGHT PART OF ORDER BY") {
      out.push_back(l);
    }
  }
  return out;
}

// "2024-05-DDTHH:MM:00Z" for capture i of a device (one every 10 minutes from May 1st).
std::string TimeOf(int i) {
  const int minutes = i * 10;
  char buf[64];
  std::snprintf(buf, sizeof buf, "2024-05-%02dT%02d:%02d:00.000Z", 1 + minutes / 1440, (minutes / 60) % 24,
                minutes % 60);
  return buf;
}

CaptureRecord MakeCapture(int device, int i) {
  CaptureRecord c;
  c.device_id = "dev-" + std::to_string(device);
  c.capture_id = c.device_id + "-" + std::to_string(i);
  c.captured_at = TimeOf(i);
  c.received_at = c.captured_at;
  // A sweep every 20 captures, over every device.
  if (i % kSweepEvery == kSweepEvery - 1) c.sweep_id = "sweep-" + std::to_string(i);
  c.raw_codec = "zstd+proto";
  c.raw_blob = "raw";
  c.raw_bytes = 3;
  c.report.platform = report::Platform::kQcom;
  c.report.device_id = c.device_id;
  c.report.captured_at = c.captured_at;
  c.report.device.total_kb = 1'000'000 + i;
  for (int p = 0; p < kProcesses; ++p) {
    report::ProcessReport& pr = c.report.processes[1000 + p];
    pr.pid = 1000 + p;
    pr.name = p == 0 ? "surfaceflinger" : "app." + std::to_string(p);
    pr.total_kb = 10'000 + p;
  }
  c.report_json = "{}";
  return c;
}

class QueryPlanOnFleetTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("memfleet_query_plan");
    ASSERT_FALSE(dir_.empty());
    path_ = dir_ + "/fleet.db";
    {
      absl::StatusOr<std::unique_ptr<SqlStore>> store = OpenSqliteStore(path_);
      ASSERT_TRUE(store.ok()) << store.status();
      std::vector<CaptureRecord> batch;
      for (int d = 0; d < kDevices; ++d) {
        for (int i = 0; i < kCapturesPerDevice; ++i) batch.push_back(MakeCapture(d, i));
      }
      absl::StatusOr<std::vector<bool>> inserted = (*store)->PutCaptures(batch);
      ASSERT_TRUE(inserted.ok()) << inserted.status();
      ASSERT_EQ(*inserted, std::vector<bool>(batch.size(), true));
    }
    if (GetParam()) {
      // What an administrator's `sqlite3 memfleet.db ANALYZE` (or PRAGMA optimize) leaves behind.
      absl::StatusOr<SqliteDb> db = SqliteDb::Open(path_, SQLITE_OPEN_READWRITE);
      ASSERT_TRUE(db.ok()) << db.status();
      ASSERT_TRUE(db->Exec("ANALYZE").ok());
    }
    absl::StatusOr<std::unique_ptr<SqlStore>> store = OpenSqliteStore(path_);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }
  void TearDown() override {
    store_.reset();
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }

  std::vector<std::string> Plan(HotQuery q) {
    absl::StatusOr<std::vector<std::string>> plan = store_->ExplainHotQuery(q);
    EXPECT_TRUE(plan.ok()) << plan.status();
    return plan.ok() ? *plan : std::vector<std::string>{};
  }

  std::string dir_;
  std::string path_;
  std::unique_ptr<SqlStore> store_;
};

TEST_P(QueryPlanOnFleetTest, ProcessTrendIsOneIndexRangeInTimeOrder) {
  std::vector<std::string> plan = Plan(HotQuery::kProcessTrend);
  // The range is bounded by device (and `since` and the page's end), not a filter over other devices' rows:
  // the device's range of its reports' time index (schema version 19: each report row carries its process
  // block), walked newest first, a tie sorted by capture id.
  EXPECT_TRUE(Mentions(
      plan, std::string("USING INDEX ") + kLatestReportIndex + " (device_id=? AND captured_at>? AND captured_at<?)"))
      << Join(plan);
  EXPECT_TRUE(FullScans(plan).empty()) << Join(plan);
  EXPECT_TRUE(Sorts(plan).empty()) << Join(plan);
}

TEST_P(QueryPlanOnFleetTest, DeviceTrendIsOneIndexRangeInTimeOrder) {
  std::vector<std::string> plan = Plan(HotQuery::kDeviceTrend);
  EXPECT_TRUE(Mentions(plan, std::string("USING INDEX ") + kLatestReportIndex + " (device_id=? AND captured_at>?)"))
      << Join(plan);
  EXPECT_TRUE(FullScans(plan).empty()) << Join(plan);
  // The index order is captured_at (walked backwards: newest first); a tie is sorted by capture_id.
  EXPECT_TRUE(Mentions(plan, "USE TEMP B-TREE FOR RIGHT PART OF ORDER BY")) << Join(plan);
  EXPECT_TRUE(Sorts(plan).empty()) << Join(plan);
}

TEST_P(QueryPlanOnFleetTest, HistorySweepsAreARangeOfTheDevicesSweepCapturesNotAReadOfEveryCapture) {
  std::vector<std::string> plan = Plan(HotQuery::kHistorySweeps);
  // The device's range of the partial index that holds sweep captures only: neither a probe of captures
  // per point of the history nor one per sweep of the fleet.
  EXPECT_TRUE(Mentions(plan, "USING COVERING INDEX captures_swept_by_device (device_id=? AND captured_at>?)"))
      << Join(plan);
  EXPECT_EQ(plan.size(), 1u) << Join(plan);
}

TEST_P(QueryPlanOnFleetTest, LatestDeviceFigureIsOneProbePerDevice) {
  std::vector<std::string> plan = Plan(HotQuery::kLatestDeviceFigure);
  EXPECT_TRUE(UsesIndex(plan, kLatestReportIndex)) << Join(plan);
  EXPECT_TRUE(FullScans(plan).empty()) << Join(plan);
  // ORDER BY d.device_id comes from the devices primary key, the per-device LIMIT 1 from the index end
  // (the last captured_at's rows, sorted by capture_id).
  EXPECT_TRUE(Sorts(plan).empty()) << Join(plan);
}

TEST_P(QueryPlanOnFleetTest, LatestProcessFigureIsOneProbePerDevice) {
  // The latest report's row, whose process block holds the figure (schema version 19).
  std::vector<std::string> plan = Plan(HotQuery::kLatestProcessFigure);
  EXPECT_TRUE(UsesIndex(plan, kLatestReportIndex)) << Join(plan);
  EXPECT_TRUE(FullScans(plan).empty()) << Join(plan);
  EXPECT_TRUE(Sorts(plan).empty()) << Join(plan);
}

TEST_P(QueryPlanOnFleetTest, ReportAtTimeIsOneProbeOfTheCapturesIndex) {
  std::vector<std::string> plan = Plan(HotQuery::kReportAt);
  EXPECT_TRUE(UsesIndex(plan, kCapturesIndex)) << Join(plan);
  EXPECT_TRUE(FullScans(plan).empty()) << Join(plan);
  EXPECT_TRUE(Sorts(plan).empty()) << Join(plan);
}

// The plans above are of the statements that answer: check those answers on this database too.
TEST_P(QueryPlanOnFleetTest, TheExplainedStatementsAnswerCorrectly) {
  absl::StatusOr<std::vector<HistoryRow>> trend =
      store_->ProcessHistory("dev-7", "surfaceflinger", "total_kb", TimeOf(kCapturesPerDevice - 10), 0);
  ASSERT_TRUE(trend.ok()) << trend.status();
  ASSERT_EQ(trend->size(), 10u);  // captures 50..59
  EXPECT_EQ(trend->front().capture_id, "dev-7-50");
  EXPECT_EQ(trend->back().capture_id, "dev-7-59");
  EXPECT_EQ(trend->back().value_kb, 10'000);  // slot 0's total
  // Capture 59 answered sweep-59 (every device's did); the others are periodic.
  EXPECT_EQ(trend->back().sweep_id, "sweep-59");
  for (size_t i = 0; i + 1 < trend->size(); ++i) EXPECT_EQ((*trend)[i].sweep_id, "") << (*trend)[i].capture_id;

  absl::StatusOr<std::vector<HistoryRow>> device_trend =
      store_->DeviceHistory("dev-7", "total_kb", TimeOf(kCapturesPerDevice - 10), 0);
  ASSERT_TRUE(device_trend.ok()) << device_trend.status();
  ASSERT_EQ(device_trend->size(), 10u);  // captures 50..59
  EXPECT_EQ(device_trend->front().capture_id, "dev-7-50");
  EXPECT_EQ(device_trend->front().value_kb, 1'000'000 + kCapturesPerDevice - 10);
  EXPECT_EQ(device_trend->back().value_kb, 1'000'000 + kCapturesPerDevice - 1);
  EXPECT_EQ(device_trend->back().sweep_id, "sweep-59");
  EXPECT_EQ((*device_trend)[8].sweep_id, "");
  absl::StatusOr<std::vector<HistoryRow>> whole = store_->DeviceHistory("dev-7", "total_kb", "", 0);
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_EQ(whole->size(), static_cast<size_t>(kCapturesPerDevice));
  std::vector<std::string> swept;
  for (const HistoryRow& row : *whole) {
    if (!row.sweep_id.empty()) swept.push_back(row.capture_id + "/" + row.sweep_id);
  }
  EXPECT_EQ(swept, (std::vector<std::string>{"dev-7-19/sweep-19", "dev-7-39/sweep-39", "dev-7-59/sweep-59"}));
  absl::StatusOr<std::vector<HistoryRow>> last_two = store_->DeviceHistory("dev-7", "total_kb", "", 2);
  ASSERT_TRUE(last_two.ok()) << last_two.status();
  ASSERT_EQ(last_two->size(), 2u);  // a limit keeps the newest
  EXPECT_EQ(last_two->front().capture_id, "dev-7-" + std::to_string(kCapturesPerDevice - 2));
  EXPECT_EQ(last_two->back().capture_id, "dev-7-" + std::to_string(kCapturesPerDevice - 1));
  EXPECT_EQ(store_->DeviceHistory("dev-7", "pss_kb", "", 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->DeviceHistory("dev-7", "total_kb; DROP TABLE devices", "", 0).status().code(),
            absl::StatusCode::kInvalidArgument);

  absl::StatusOr<std::vector<FleetValueRow>> latest = store_->LatestPerDevice("total_kb", "");
  ASSERT_TRUE(latest.ok()) << latest.status();
  ASSERT_EQ(latest->size(), static_cast<size_t>(kDevices));
  for (const FleetValueRow& row : *latest) {
    EXPECT_EQ(row.captured_at, TimeOf(kCapturesPerDevice - 1)) << row.device.device_id;
    EXPECT_EQ(row.value_kb, 1'000'000 + kCapturesPerDevice - 1) << row.device.device_id;
  }
  absl::StatusOr<std::vector<FleetValueRow>> process = store_->LatestPerDevice("total_kb", "app.3");
  ASSERT_TRUE(process.ok()) << process.status();
  ASSERT_EQ(process->size(), static_cast<size_t>(kDevices));
  EXPECT_EQ(process->front().value_kb, 10'003);
}

INSTANTIATE_TEST_SUITE_P(Statistics, QueryPlanOnFleetTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return std::string(info.param ? "AfterAnalyze" : "Fresh");
                         });

}  // namespace
}  // namespace memfleet::storage
