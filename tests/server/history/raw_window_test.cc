// The raw window (`--retain-raw-days`, RetentionPolicy::raw) on a farm's history, on both backends (a real
// SQLite file, a database on a real PostgreSQL: tests/support/store_backends.h): three devices ingested as the
// server does (engine, a keyframe every 64), a capture every 30 minutes whose every figure moves
// (testing::Churned), farm-2 silent for two days. Thinned with a raw window of 2 days and no other policy.
//
// What must hold, stated from the window and the rows read before: every capture stays; beyond the window
// a capture's raw text goes unless a delta inside the window names it (its keyframe) or it is its device's
// latest keyframe (the server may still store deltas against it); the reports, device and process trends
// read back exactly as before; re-accounting re-accounts the captures whose raw text stays and skips the
// others, saying how many and why; reading a dropped raw says which window dropped it; a dry run changes
// nothing; the server's worker drops them too.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "absl/strings/str_cat.h"
#include "common/utc_time.h"
#include "nlohmann/json.hpp"
#include "server/history/reaccount.h"
#include "server/history/retention.h"
#include "server/history/retention_worker.h"
#include "server/ingest/capture_ingestor.h"
#include "storage/backends/open_store.h"
#include "tests/support/manual_clock.h"
#include "tests/support/history_before.h"
#include "tests/support/ingested_history.h"
#include "tests/support/moving_capture.h"
#include "tests/support/sample_capture.h"
#include "tests/support/store_backends.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace memfleet::server::raw_window_test {
namespace {

constexpr int64_t kMinuteMs = 60'000;
constexpr int64_t kHourMs = 60 * kMinuteMs;
constexpr int64_t kDayMs = 24 * kHourMs;
// 2026-11-09T00:00:00Z: the farm's first capture; "now" is an hour after farm-0's and farm-1's last.
constexpr int64_t kStartMs = int64_t{1'794'182'400'000};
constexpr int kCaptures = 200;  // farm-0 and farm-1: 100 hours; farm-2 stops after half of them
constexpr int64_t kNowMs = kStartMs + kCaptures * 30 * kMinuteMs + kHourMs;
constexpr int kRawDays = 2;
constexpr int64_t kRawMs = kRawDays * kDayMs;
const char* const kDevices[] = {"farm-0", "farm-1", "farm-2"};
const char* const kProcesses[] = {"system_server", "com.android.systemui"};

RetentionPolicy RawOnly() {
  RetentionPolicy policy;
  policy.raw = std::chrono::milliseconds(kRawMs);
  return policy;
}

int64_t AtOf(int device, int seq) { return kStartMs + seq * 30 * kMinuteMs + device * 7 * kMinuteMs; }

class RawWindowTest : public testing::SqlStoreOnBackendTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(SqlStoreOnBackendTest::SetUp());
    const capture::Capture sample = testing::LoadCapture(testing::TestData("captures/qcom-sm8450/tree"));
    ASSERT_NE(sample.FileContent("capture.json"), nullptr);
    DeltaOptions delta;
    delta.keyframe_every = 64;
    CaptureIngestor ingestor(*store_, nullptr, nullptr, delta);
    for (int d = 0; d < 3; ++d) {
      const int count = d == 2 ? kCaptures / 2 : kCaptures;
      for (int seq = 0; seq < count; ++seq) {
        ASSERT_TRUE(testing::IngestMoved(
            ingestor, *sample.FileContent("capture.json"),
            testing::Churned(sample, seq * 3 + d, testing::Churn::kEverything), kDevices[d], seq,
            FormatUtcMillis(std::chrono::system_clock::time_point(std::chrono::milliseconds(AtOf(d, seq))))))
            << kDevices[d] << " " << seq;
      }
    }
    for (const char* device : kDevices) {
      ASSERT_NO_FATAL_FAILURE(testing::ReadHistoryBefore(
          *store_, device, std::vector<std::string>(std::begin(kProcesses), std::end(kProcesses)), before_[device]));
      for (const auto& [id, b] : before_[device].captures) ASSERT_FALSE(b.raw_dropped) << id;
    }
  }

  // The captures whose raw text is gone, by the stored codec.
  std::set<std::string> Dropped() {
    std::set<std::string> ids;
    for (const char* device : kDevices) {
      absl::StatusOr<std::vector<storage::RetentionRow>> rows = store_->RetentionRows(device);
      EXPECT_TRUE(rows.ok()) << rows.status();
      if (!rows.ok()) continue;
      for (const storage::RetentionRow& r : *rows) {
        if (r.raw_dropped) ids.insert(r.capture_id);
      }
    }
    return ids;
  }

  // The captures whose raw text the window drops, from the rows read before (see the file comment).
  std::set<std::string> WindowDrops() {
    std::set<std::string> drops;
    for (const auto& [device, history] : before_) {
      const std::map<std::string, testing::CaptureBefore>& captures = history.captures;
      std::set<std::string> needed;  // keyframes of deltas inside the window, and the latest keyframe
      std::string latest_keyframe;
      for (const auto& [id, b] : captures) {
        if (!b.keyframe_id.empty() && kNowMs - b.at_ms < kRawMs) needed.insert(b.keyframe_id);
        if (b.keyframe_id.empty() && (latest_keyframe.empty() || b.at_ms > captures.at(latest_keyframe).at_ms)) {
          latest_keyframe = id;
        }
      }
      needed.insert(latest_keyframe);
      for (const auto& [id, b] : captures) {
        if (kNowMs - b.at_ms >= kRawMs && needed.count(id) == 0) drops.insert(id);
      }
    }
    return drops;
  }

  size_t CaptureCount() const {
    size_t n = 0;
    for (const auto& [device, history] : before_) n += history.captures.size();
    return n;
  }

  std::map<std::string, testing::HistoryBefore> before_;  // by device
};

TEST_P(RawWindowTest, RawTextGoesBeyondTheWindowAndEverythingElseReadsAsBefore) {
  const std::set<std::string> drops = WindowDrops();
  // The farm has what the rules are about: deltas and keyframes beyond the window, a keyframe beyond it that
  // a delta inside it names, and farm-2's latest keyframe beyond it.
  size_t dropped_keyframes = 0;
  size_t kept_for_deltas = 0;
  for (const auto& [device, history] : before_) {
    const std::map<std::string, testing::CaptureBefore>& captures = history.captures;
    for (const auto& [id, b] : captures) {
      if (!b.keyframe_id.empty() || kNowMs - b.at_ms < kRawMs) continue;
      (drops.count(id) != 0 ? dropped_keyframes : kept_for_deltas) += 1;
    }
  }
  ASSERT_GE(dropped_keyframes, 3u) << "every device's first keyframe has all its deltas beyond the window";
  ASSERT_GE(kept_for_deltas, 3u) << "farm-0's and farm-1's second keyframe, farm-2's latest";
  ASSERT_GT(drops.size(), 250u);

  // A dry run counts what the run then drops, and drops nothing.
  RetentionOptions dry;
  dry.dry_run = true;
  absl::StatusOr<RetentionRun> planned = ApplyRetention(*store_, RawOnly(), kNowMs, dry);
  ASSERT_TRUE(planned.ok()) << planned.status();
  EXPECT_EQ(planned->raw_dropped, drops.size());
  EXPECT_EQ(planned->deleted, 0u);
  EXPECT_TRUE(Dropped().empty());
  EXPECT_THAT(
      DescribeRetentionRun(*planned, true),
      ::testing::HasSubstr(absl::StrCat("raw text of ", drops.size(), " captures older than 2 days would be dropped")));

  absl::StatusOr<RetentionRun> run = ApplyRetention(*store_, RawOnly(), kNowMs, RetentionOptions{});
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(run->failures.empty()) << run->failures.front();
  EXPECT_EQ(run->deleted, 0u);
  EXPECT_EQ(run->raw_dropped, drops.size());
  EXPECT_EQ(run->raw_kept_for_deltas, kept_for_deltas);
  EXPECT_EQ(run->captures_before, CaptureCount());
  EXPECT_EQ(Dropped(), drops);
  EXPECT_THAT(DescribeRetentionRun(*run, false),
              ::testing::StartsWith(absl::StrCat("3 devices, ", CaptureCount(), " captures, none deleted, raw text of ",
                                                 drops.size(),
                                                 " captures older than 2 days dropped, their reports "
                                                 "kept (",
                                                 kept_for_deltas, " keyframes keep theirs for their deltas)")));

  for (const auto& [device, history] : before_) {
    const std::map<std::string, testing::CaptureBefore>& captures = history.captures;
    SCOPED_TRACE(device);
    // Every capture stays, with its report and figure as they were.
    for (const auto& [id, b] : captures) {
      absl::StatusOr<std::optional<storage::StoredReport>> report = store_->GetReportByCapture(id);
      ASSERT_TRUE(report.ok() && report->has_value()) << id;
      EXPECT_EQ((*report)->report_json, b.report_json) << id << "'s report changed";
      absl::StatusOr<std::optional<int64_t>> total = store_->CaptureFigure(id, "total_kb", "");
      ASSERT_TRUE(total.ok()) << total.status();
      EXPECT_EQ(*total, b.total_kb) << id;
      // Reading the raw text: there, or an error that names the window.
      absl::StatusOr<std::optional<storage::CaptureStore::RawCapture>> raw = store_->GetRawCapture(id);
      ASSERT_TRUE(raw.ok() && raw->has_value()) << id;
      const absl::Status kept = storage::RawTextKept(**raw);
      if (drops.count(id) == 0) {
        EXPECT_TRUE(kept.ok()) << kept;
        EXPECT_FALSE((*raw)->raw_blob.empty()) << id;
      } else {
        EXPECT_EQ(kept.code(), absl::StatusCode::kFailedPrecondition) << id;
        EXPECT_THAT(std::string(kept.message()), ::testing::HasSubstr("raw captures are kept 2 days"));
        EXPECT_THAT(std::string(kept.message()), ::testing::HasSubstr("--retain-raw-days"));
        EXPECT_TRUE((*raw)->raw_blob.empty()) << id;
        EXPECT_EQ((*raw)->raw_base, b.keyframe_id) << id << " still names its keyframe";
      }
    }
    // The trends: every row as before, the figures moving.
    testing::ExpectSameTrend(testing::DeviceTrend(*store_, device), before_[device].device_trend, "device total_kb");
    std::set<std::optional<int64_t>> totals;
    for (const storage::HistoryRow& row : before_[device].device_trend) totals.insert(row.value_kb);
    EXPECT_GT(totals.size(), captures.size() / 2) << "the device total must move between captures";
    for (const char* process : kProcesses) {
      const std::vector<storage::HistoryRow>& was = before_[device].process_trends[process];
      EXPECT_EQ(was.size(), captures.size()) << process << " is in every capture";
      std::set<std::optional<int64_t>> values;
      for (const storage::HistoryRow& row : was) values.insert(row.value_kb);
      EXPECT_GT(values.size(), captures.size() / 2) << process << "'s figure must move between captures";
      testing::ExpectSameTrend(testing::ProcessTrend(*store_, device, process), was, std::string(process) + " pss_kb");
    }
  }

  // A keyframe a delta inside the window names cannot lose its raw text, even asked directly.
  std::string needed_keyframe;
  for (const auto& [id, b] : before_["farm-0"].captures) {
    if (!b.keyframe_id.empty() && kNowMs - b.at_ms < kRawMs &&
        kNowMs - before_["farm-0"].captures[b.keyframe_id].at_ms >= kRawMs) {
      needed_keyframe = b.keyframe_id;
    }
  }
  ASSERT_FALSE(needed_keyframe.empty());
  absl::StatusOr<size_t> refused = store_->DropRawCaptures({needed_keyframe}, kRawDays);
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_EQ(*refused, 0u);

  // Re-accounting: the captures with their raw text, every delta against its keyframe; the others skipped
  // and said so.
  absl::StatusOr<ReaccountResult> re = ReaccountCaptures(*store_, "");
  ASSERT_TRUE(re.ok()) << re.status();
  EXPECT_EQ(re->failed, 0u) << (re->failures.empty() ? "" : re->failures.front());
  EXPECT_EQ(re->reaccounted, CaptureCount() - drops.size());
  EXPECT_EQ(re->skipped_raw_dropped, drops.size());
  EXPECT_EQ(DescribeReaccountSkips(*re),
            absl::StrCat(", ", drops.size(),
                         " skipped: their raw text is beyond the raw window (2 days, memfleet-server "
                         "--retain-raw-days), their reports stay as they were"));

  // A second run at the same time finds nothing more to drop.
  absl::StatusOr<RetentionRun> again = ApplyRetention(*store_, RawOnly(), kNowMs, RetentionOptions{});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->raw_dropped, 0u);
}

TEST_P(RawWindowTest, TheServersWorkerDropsRawTextWithNoOtherPolicy) {
  testing::ManualSteadyClock clock;
  std::atomic<int64_t> now_ms{kNowMs};
  RetentionWorkerOptions options;
  options.db_path = location_;
  options.policy = RawOnly();
  options.interval = std::chrono::minutes(10);
  options.clock = &clock;
  options.now_ms = [&now_ms] { return now_ms.load(); };
  absl::StatusOr<std::unique_ptr<RetentionWorker>> worker = RetentionWorker::Start(options);
  ASSERT_TRUE(worker.ok()) << worker.status();
  ASSERT_TRUE((*worker)->WaitForRuns(1, absl::Seconds(120)));
  EXPECT_EQ(Dropped(), WindowDrops());
  EXPECT_EQ((*worker)->last_run().raw_dropped, WindowDrops().size());
  EXPECT_EQ((*worker)->last_run().deleted, 0u);
  // A day later the window has moved on: the next run drops the raw text of the captures it passed.
  const size_t first = Dropped().size();
  now_ms += kDayMs;
  clock.Advance(std::chrono::minutes(10));
  ASSERT_TRUE((*worker)->WaitForRuns(2, absl::ZeroDuration()));
  EXPECT_GT(Dropped().size(), first + 80);
  EXPECT_EQ((*worker)->last_run().raw_dropped, Dropped().size() - first);
}

INSTANTIATE_TEST_SUITE_P(Backends, RawWindowTest, testing::kBothBackends, testing::StoreBackendName);

}  // namespace
}  // namespace memfleet::server::raw_window_test
