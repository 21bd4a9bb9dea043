// Retention on a real SQLite file (server/history/retention.h): captures of the qcom-sm8450 sample ingested as the
// server does (engine, delta storage) at simulated times, then thinned. Checks what a dry run leaves
// (everything), what a run deletes and keeps (one capture an hour past the full window, the sweep's
// capture, keyframes of kept deltas), that every kept capture still decodes and re-accounts, that the
// reports and trends answer for the kept ones, and that the freed pages go back to the file system.
#include "server/history/retention.h"

#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "common/utc_time.h"
#include "server/ingest/capture_ingestor.h"
#include "server/history/reaccount.h"
#include "server/history/retention_worker.h"
#include "storage/sqlite/sqlite_db.h"
#include "storage/sqlite/sqlite_store.h"
#include "tests/support/manual_clock.h"
#include "tests/support/moving_capture.h"
#include "tests/support/sample_capture.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace memfleet::server {
namespace {

constexpr char kDevice[] = "sim-qcom-101";
constexpr int64_t kMinuteMs = 60'000;
constexpr int64_t kHourMs = 60 * kMinuteMs;
constexpr int64_t kDayMs = 24 * kHourMs;
// 2026-11-30T00:00:00Z: the first capture; one every 20 minutes for 3 days.
constexpr int64_t kStartMs = int64_t{1'795'996'800'000};
constexpr int kCaptures = 3 * 24 * 3;
constexpr int kSweepSeq = 10;  // 03:20 on the first day, a sweep's capture

class RetentionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    path_ = dir_.path() + "/memfleet.db";
    absl::StatusOr<std::unique_ptr<storage::SqliteStore>> s = storage::SqliteStore::Open(path_, {});
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
    const capture::Capture sample = testing::LoadCapture(testing::TestData("captures/qcom-sm8450/tree"));
    DeltaOptions delta;
    delta.keyframe_every = 8;  // several keyframes a day, so that thinning meets them
    CaptureIngestor ingestor(*store_, nullptr, nullptr, delta);
    for (int seq = 0; seq < kCaptures; ++seq) {
      AssembledCapture a;
      a.device_id = kDevice;
      a.capture_id = testing::CaptureId(kDevice, seq);
      a.captured_at = FormatUtcMillis(std::chrono::system_clock::time_point(std::chrono::milliseconds(At(seq))));
      a.sweep_id = seq == kSweepSeq ? "sweep-1" : "";
      a.capture = testing::Later(sample, seq * 20);
      ASSERT_TRUE(ingestor.Ingest(std::move(a)).has_ack()) << seq;
    }
  }

  static int64_t At(int seq) { return kStartMs + seq * 20 * kMinuteMs; }

  std::set<std::string> StoredIds() {
    std::set<std::string> ids;
    absl::StatusOr<std::vector<storage::RetentionRow>> rows = store_->RetentionRows(kDevice);
    EXPECT_TRUE(rows.ok()) << rows.status();
    if (rows.ok()) {
      for (const storage::RetentionRow& r : *rows) ids.insert(r.capture_id);
    }
    return ids;
  }

  testing::TempDir dir_{"memfleet-retention"};
  std::string path_;
  std::unique_ptr<storage::SqliteStore> store_;
};

// Full resolution for the last day, hourly for the day before, daily before that; "now" is the end of
// the third day, so day 3 stays whole, day 2 keeps one an hour, day 1 one capture (plus pins).
const RetentionPolicy kPolicy{std::chrono::hours(24), std::chrono::hours(48)};
constexpr int64_t kNowMs = kStartMs + 3 * kDayMs;

TEST_F(RetentionTest, ADryRunDeletesNothingAndCountsWhatWouldGo) {
  RetentionOptions options;
  options.dry_run = true;
  absl::StatusOr<RetentionRun> run = ApplyRetention(*store_, kPolicy, kNowMs, options);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->captures_before, static_cast<size_t>(kCaptures));
  EXPECT_GT(run->deleted, 100u);
  EXPECT_EQ(StoredIds().size(), static_cast<size_t>(kCaptures));
  EXPECT_NE(DescribeRetentionRun(*run, true).find("would be deleted"), std::string::npos);
}

TEST_F(RetentionTest, ThinsByAgeKeepsPinsAndKeyframesAndEverythingLeftStillReads) {
  absl::StatusOr<RetentionRun> run = ApplyRetention(*store_, kPolicy, kNowMs, RetentionOptions{});
  ASSERT_TRUE(run.ok()) << run.status();
  const std::set<std::string> kept = StoredIds();
  EXPECT_EQ(kept.size() + run->deleted, static_cast<size_t>(kCaptures));

  // Day 3 (ages under 24 h): every capture.
  for (int seq = 2 * 72; seq < kCaptures; ++seq) EXPECT_EQ(kept.count(testing::CaptureId(kDevice, seq)), 1u) << seq;
  // Day 2: the moving sample's total grows with time, so each hour keeps its last capture (seq 3h+2).
  int day2_kept = 0;
  for (int seq = 72; seq < 2 * 72; ++seq) {
    if (kept.count(testing::CaptureId(kDevice, seq)) != 0) ++day2_kept;
  }
  for (int hour = 24; hour < 48; ++hour) EXPECT_EQ(kept.count(testing::CaptureId(kDevice, hour * 3 + 2)), 1u) << hour;
  EXPECT_GE(day2_kept, 24);
  EXPECT_LE(day2_kept, 24 + 72 / 8);  // plus at most the day's keyframes
  // Day 1: its last capture (the day's peak), the sweep's capture, and keyframes only if a kept delta needs them.
  EXPECT_EQ(kept.count(testing::CaptureId(kDevice, 71)), 1u);
  EXPECT_EQ(kept.count(testing::CaptureId(kDevice, kSweepSeq)), 1u);
  int day1_kept = 0;
  for (int seq = 0; seq < 72; ++seq) {
    if (kept.count(testing::CaptureId(kDevice, seq)) != 0) ++day1_kept;
  }
  EXPECT_LE(day1_kept, 4);

  // Every kept delta's keyframe is there: re-accounting reads every kept capture back without a failure.
  absl::StatusOr<ReaccountResult> re = ReaccountCaptures(*store_, kDevice);
  ASSERT_TRUE(re.ok()) << re.status();
  EXPECT_EQ(re->failed, 0u) << (re->failures.empty() ? "" : re->failures.front());
  EXPECT_EQ(re->reaccounted, kept.size());
  // The trend has one point per kept capture (the process is in every capture), the reports answer.
  absl::StatusOr<std::vector<storage::HistoryRow>> trend =
      store_->ProcessHistory(kDevice, "system_server", "total_kb", "", 0);
  ASSERT_TRUE(trend.ok()) << trend.status();
  EXPECT_EQ(trend->size(), kept.size());
  absl::StatusOr<std::optional<storage::StoredReport>> sweep_report =
      store_->GetReportByCapture(testing::CaptureId(kDevice, kSweepSeq));
  ASSERT_TRUE(sweep_report.ok() && sweep_report->has_value());
  EXPECT_FALSE((*sweep_report)->report_json.empty());
  // The space went back to the file system.
  EXPECT_GT(run->file_bytes_freed, 0);

  // The device's history says how far it is thinned, for trends over it.
  absl::StatusOr<storage::RetentionMarks> marks = store_->GetRetentionMarks(kDevice);
  ASSERT_TRUE(marks.ok()) << marks.status();
  EXPECT_EQ(marks->hourly_before, "2026-12-02T00:00:00.000Z");  // now (end of day 3) minus 24 h
  EXPECT_EQ(marks->daily_before, "2026-12-01T00:00:00.000Z");   // minus 48 h

  // A second run finds nothing more to delete.
  absl::StatusOr<RetentionRun> again = ApplyRetention(*store_, kPolicy, kNowMs, RetentionOptions{});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->deleted, 0u);
}

TEST_F(RetentionTest, ALabelledCaptureIsKept) {
  {
    absl::StatusOr<storage::SqliteDb> db = storage::SqliteDb::Open(path_, SQLITE_OPEN_READWRITE);
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE(db->Exec("INSERT INTO capture_labels (capture_id, key, value) VALUES ('" +
                         testing::CaptureId(kDevice, 5) + "', 'run', '1234')")
                    .ok());
  }
  absl::StatusOr<RetentionRun> run = ApplyRetention(*store_, kPolicy, kNowMs, RetentionOptions{});
  ASSERT_TRUE(run.ok()) << run.status();
  const std::set<std::string> kept = StoredIds();
  EXPECT_EQ(kept.count(testing::CaptureId(kDevice, 5)), 1u);  // day 1, not its peak: only the label keeps it
  EXPECT_EQ(kept.count(testing::CaptureId(kDevice, 6)), 0u);
}

TEST_F(RetentionTest, DeletingAKeyframeAKeptDeltaNeedsFailsAndDeletesNothing) {
  absl::StatusOr<std::vector<storage::RetentionRow>> rows = store_->RetentionRows(kDevice);
  ASSERT_TRUE(rows.ok()) << rows.status();
  std::string keyframe;
  for (const storage::RetentionRow& r : *rows) {
    if (!r.keyframe_id.empty()) {
      keyframe = r.keyframe_id;
      break;
    }
  }
  ASSERT_FALSE(keyframe.empty()) << "the ingest must have stored deltas";
  absl::StatusOr<size_t> deleted = store_->DeleteCaptures({testing::CaptureId(kDevice, kCaptures - 1), keyframe});
  EXPECT_EQ(deleted.status().code(), absl::StatusCode::kFailedPrecondition) << deleted.status();
  EXPECT_EQ(StoredIds().size(), static_cast<size_t>(kCaptures));
}

TEST_F(RetentionTest, TheServersWorkerThinsAtOnceAndAgainEachIntervalOnItsClock) {
  testing::ManualSteadyClock clock;
  std::atomic<int64_t> now_ms{kNowMs};
  RetentionWorkerOptions options;
  options.db_path = path_;
  options.policy = kPolicy;
  options.interval = std::chrono::minutes(10);
  options.clock = &clock;
  options.now_ms = [&now_ms] { return now_ms.load(); };
  absl::StatusOr<std::unique_ptr<RetentionWorker>> worker = RetentionWorker::Start(options);
  ASSERT_TRUE(worker.ok()) << worker.status();
  ASSERT_TRUE((*worker)->WaitForRuns(1, absl::Seconds(120)));
  const size_t after_first = StoredIds().size();
  EXPECT_LT(after_first, static_cast<size_t>(kCaptures));
  EXPECT_EQ((*worker)->last_run().deleted, kCaptures - after_first);

  // Short of an interval on the steady clock, nothing runs.
  clock.Advance(std::chrono::minutes(10) - std::chrono::milliseconds(1));
  EXPECT_FALSE((*worker)->WaitForRuns(2, absl::ZeroDuration()));
  // A day later on the wall clock, day 3 is past the full window: the next run, an interval after the
  // first on the steady clock, thins it to one an hour; Advance returns once it has run.
  now_ms += kDayMs;
  clock.Advance(std::chrono::milliseconds(1));
  ASSERT_TRUE((*worker)->WaitForRuns(2, absl::ZeroDuration()));
  EXPECT_LT(StoredIds().size(), after_first - 40);
}

}  // namespace
}  // namespace memfleet::server
