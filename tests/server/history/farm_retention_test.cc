// Retention on a farm's history, on both backends (a real SQLite file, a database on a real PostgreSQL:
// tests/support/store_backends.h): three devices ingested as the server does (engine, a keyframe every 8),
// three weeks of captures — one every 4 hours for the first fortnight, then one every 30 minutes — whose
// figures move up and down from capture to capture (free memory, every process's Rss and Pss, so the device
// total and the process figures), so each hour's and day's peak falls anywhere in it. farm-2 stopped four days ago, on
// a capture below the one before it. Thinned with --retain-full-days 2 --retain-hourly-days 7 at the end of the third
// week.
//
// What must hold, stated from the policy and the figures read before thinning, not from the planner:
// every capture under 2 days old stays; from 2 to 7 days each UTC hour keeps its highest device total, older
// each UTC day; each device's latest stays; nothing else stays but keyframes that a kept delta names, and no
// kept delta loses its keyframe. The kept captures read back as they were (report, device figure), the
// device and process trends over the kept captures are the same rows as before, and every kept capture
// still re-accounts.
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "common/utc_time.h"
#include "nlohmann/json.hpp"
#include "server/history/reaccount.h"
#include "server/history/retention.h"
#include "server/ingest/capture_ingestor.h"
#include "storage/backends/open_store.h"
#include "tests/support/history_before.h"
#include "tests/support/ingested_history.h"
#include "tests/support/moving_capture.h"
#include "tests/support/sample_capture.h"
#include "tests/support/store_backends.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace memfleet::server::farm_retention {
namespace {

constexpr int64_t kMinuteMs = 60'000;
constexpr int64_t kHourMs = 60 * kMinuteMs;
constexpr int64_t kDayMs = 24 * kHourMs;
// 2026-11-09T00:00:00Z: the farm's first capture; "now" is three weeks later.
constexpr int64_t kStartMs = int64_t{1'794'182'400'000};
constexpr int64_t kNowMs = kStartMs + 21 * kDayMs;
constexpr int64_t kFullMs = 2 * kDayMs;
constexpr int64_t kHourlyMs = 7 * kDayMs;
const RetentionPolicy kPolicy{std::chrono::milliseconds(kFullMs), std::chrono::milliseconds(kHourlyMs)};
const char* const kDevices[] = {"farm-0", "farm-1", "farm-2"};
// The processes whose trends are compared (in every capture of the sample).
const char* const kProcesses[] = {"system_server", "com.android.systemui"};

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0) ? 1 : 0); }

std::string Utc(int64_t ms) {
  return FormatUtcMillis(std::chrono::system_clock::time_point(std::chrono::milliseconds(ms)));
}

// One device's capture times: every 4 h for 15 days, then every 30 min until an hour ago (farm-2's stop 4
// days ago), each device a few minutes after the one before, none on a window's edge.
std::vector<int64_t> TimesOf(int device) {
  std::vector<int64_t> times;
  const int64_t offset = (5 + device * 7) * kMinuteMs;
  for (int64_t at = kStartMs; at < kStartMs + 15 * kDayMs; at += 4 * kHourMs) times.push_back(at + offset);
  const int64_t end = device == 2 ? kNowMs - 4 * kDayMs : kNowMs - kHourMs;
  for (int64_t at = kStartMs + 15 * kDayMs; at < end; at += 30 * kMinuteMs) times.push_back(at + offset);
  return times;
}

// How far capture `seq` of `device` has moved from the sample: up and down, never the same twice in a row.
int MovedMinutes(int device, size_t seq, size_t count) {
  if (device == 2 && seq + 1 == count) return 0;  // farm-2's last word: below the capture before it
  return static_cast<int>((seq * 37 + static_cast<size_t>(device) * 59) % 233) + 1;
}

// The sample `minutes` later (moving_capture.h), and each process's first mapping's Pss up by half its Rss.
capture::Capture Moved(const capture::Capture& sample, int minutes) {
  const capture::Capture later = testing::Later(sample, minutes);
  capture::Capture moved = later;
  for (const auto& [path, node] : later.nodes()) {
    if (node.is_file() && testing::EndsWith(path, "/smaps")) {
      moved.AddFile(path, testing::BumpNumberAfter(node.content, "Pss:", 2L * minutes));
    }
  }
  return moved;
}

class FarmRetentionTest : public testing::SqlStoreOnBackendTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(SqlStoreOnBackendTest::SetUp());
    const capture::Capture sample = testing::LoadCapture(testing::TestData("captures/qcom-sm8450/tree"));
    ASSERT_NE(sample.FileContent("capture.json"), nullptr);
    DeltaOptions delta;
    delta.keyframe_every = 8;
    CaptureIngestor ingestor(*store_, nullptr, nullptr, delta);
    for (int d = 0; d < 3; ++d) {
      const std::vector<int64_t> times = TimesOf(d);
      for (size_t seq = 0; seq < times.size(); ++seq) {
        ASSERT_TRUE(testing::IngestMoved(ingestor, *sample.FileContent("capture.json"),
                                         Moved(sample, MovedMinutes(d, seq, times.size())), kDevices[d],
                                         static_cast<int>(seq), Utc(times[seq])))
            << kDevices[d] << " " << seq;
      }
    }
    for (const char* device : kDevices) {
      ASSERT_NO_FATAL_FAILURE(testing::ReadHistoryBefore(
          *store_, device, std::vector<std::string>(std::begin(kProcesses), std::end(kProcesses)), before_[device]));
    }
  }

  // The stored captures of `device`: id -> the keyframe it names.
  std::map<std::string, std::string> Stored(const std::string& device) {
    std::map<std::string, std::string> ids;
    absl::StatusOr<std::vector<storage::RetentionRow>> rows = store_->RetentionRows(device);
    EXPECT_TRUE(rows.ok()) << rows.status();
    if (rows.ok()) {
      for (const storage::RetentionRow& r : *rows) ids[r.capture_id] = r.keyframe_id;
    }
    return ids;
  }

  // The captures of `device` the policy keeps, from the figures read before thinning (see the file
  // comment), keyframes of kept deltas aside.
  std::set<std::string> PolicyKeeps(const std::string& device) {
    std::set<std::string> keep;
    std::map<std::pair<int64_t, int64_t>, std::string> peaks;  // (width, index) -> its highest total
    std::string latest;
    for (const auto& [id, b] : before_[device].captures) {
      if (latest.empty() || b.at_ms > before_[device].captures[latest].at_ms) latest = id;
      const int64_t age = kNowMs - b.at_ms;
      if (age < kFullMs) {
        keep.insert(id);
        continue;
      }
      const int64_t width = age < kHourlyMs ? kHourMs : kDayMs;
      std::string& peak = peaks[{width, FloorDiv(b.at_ms, width)}];
      const testing::CaptureBefore* p = peak.empty() ? nullptr : &before_[device].captures[peak];
      if (p == nullptr || b.total_kb > p->total_kb || (b.total_kb == p->total_kb && b.at_ms > p->at_ms)) peak = id;
    }
    for (const auto& [bucket, id] : peaks) keep.insert(id);
    keep.insert(latest);
    return keep;
  }

  std::map<std::string, testing::HistoryBefore> before_;  // by device
};

// The rows of `before` whose capture is in `kept`, in their order.
std::vector<storage::HistoryRow> KeptRows(const std::vector<storage::HistoryRow>& before,
                                          const std::map<std::string, std::string>& kept) {
  std::vector<storage::HistoryRow> rows;
  for (const storage::HistoryRow& row : before) {
    if (kept.count(row.capture_id) != 0) rows.push_back(row);
  }
  return rows;
}

TEST_P(FarmRetentionTest, EachRuleKeepsWhatItSaysAndTheKeptHistoryReadsAsBefore) {
  size_t captures = 0;
  for (const auto& [device, history] : before_) captures += history.captures.size();
  // A dry run counts what the run then deletes, and deletes nothing.
  RetentionOptions dry;
  dry.dry_run = true;
  absl::StatusOr<RetentionRun> planned = ApplyRetention(*store_, kPolicy, kNowMs, dry);
  ASSERT_TRUE(planned.ok()) << planned.status();
  for (const char* device : kDevices) EXPECT_EQ(Stored(device).size(), before_[device].captures.size()) << device;
  absl::StatusOr<RetentionRun> run = ApplyRetention(*store_, kPolicy, kNowMs, RetentionOptions{});
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->deleted, planned->deleted);
  EXPECT_EQ(run->kept_for_deltas, planned->kept_for_deltas);
  EXPECT_TRUE(run->failures.empty()) << run->failures.front();
  EXPECT_EQ(run->devices, 3u);
  EXPECT_EQ(run->captures_before, captures);

  size_t kept_total = 0;
  for (int d = 0; d < 3; ++d) {
    const std::string device = kDevices[d];
    SCOPED_TRACE(device);
    const std::map<std::string, std::string> kept = Stored(device);
    kept_total += kept.size();
    const std::set<std::string> keeps = PolicyKeeps(device);
    for (const std::string& id : keeps) {
      const testing::CaptureBefore& b = before_[device].captures[id];
      EXPECT_EQ(kept.count(id), 1u) << id << " (" << b.captured_at << ", " << (kNowMs - b.at_ms) / kHourMs
                                    << " h old) is under 2 days old, its bucket's peak or the device's latest";
    }
    // Beyond the policy, only keyframes of kept deltas; and every kept delta has its keyframe.
    std::set<std::string> named;
    for (const auto& [id, keyframe] : kept) {
      if (!keyframe.empty()) named.insert(keyframe);
    }
    for (const std::string& keyframe : named) EXPECT_EQ(kept.count(keyframe), 1u) << "a kept delta names " << keyframe;
    for (const auto& [id, keyframe] : kept) {
      if (keeps.count(id) == 0) {
        EXPECT_TRUE(keyframe.empty() && named.count(id) != 0)
            << id << " (" << before_[device].captures[id].captured_at << ") is kept but is neither its bucket's peak, "
            << "the latest, under 2 days old, nor a kept delta's keyframe";
      }
    }
    // What the rules mean for this farm, in counts a user would check: the last 2 days whole (every 30
    // minutes but the last hour, none for farm-2, silent for 4 days), one an hour from 2 to 7 days, one a
    // day before.
    size_t young = 0;
    std::set<int64_t> hours;
    std::set<int64_t> days;
    for (const auto& [id, b] : before_[device].captures) {
      const int64_t age = kNowMs - b.at_ms;
      if (age < kFullMs) {
        ++young;
      } else if (age < kHourlyMs) {
        hours.insert(FloorDiv(b.at_ms, kHourMs));
      } else {
        days.insert(FloorDiv(b.at_ms, kDayMs));
      }
    }
    EXPECT_EQ(young, device == "farm-2" ? 0u : 2u * 48 - 2) << "captures under 2 days old";
    EXPECT_GE(kept.size(), young + hours.size() + days.size());
    EXPECT_LE(kept.size(), young + hours.size() + days.size() + named.size() + 1);
    EXPECT_LT(kept.size(), before_[device].captures.size() * 3 / 4) << "not thinned";

    // The kept captures read back as before, and the deleted ones are gone.
    for (const auto& [id, b] : before_[device].captures) {
      absl::StatusOr<std::optional<storage::StoredReport>> report = store_->GetReportByCapture(id);
      ASSERT_TRUE(report.ok()) << report.status();
      if (kept.count(id) == 0) {
        EXPECT_FALSE(report->has_value()) << id << " was deleted";
        continue;
      }
      ASSERT_TRUE(report->has_value()) << id;
      EXPECT_EQ((*report)->report_json, b.report_json) << id << "'s report changed";
      absl::StatusOr<std::optional<int64_t>> total = store_->CaptureFigure(id, "total_kb", "");
      ASSERT_TRUE(total.ok()) << total.status();
      EXPECT_EQ(*total, b.total_kb) << id;
    }
    // Trends over the kept range: exactly the rows they had for those captures.
    testing::ExpectSameTrend(testing::DeviceTrend(*store_, device), KeptRows(before_[device].device_trend, kept),
                             "device total_kb");
    std::set<std::optional<int64_t>> totals;
    for (const storage::HistoryRow& row : before_[device].device_trend) totals.insert(row.value_kb);
    EXPECT_GT(totals.size(), 100u) << "the device total must move between captures";
    for (const char* process : kProcesses) {
      const std::vector<storage::HistoryRow>& was = before_[device].process_trends[process];
      EXPECT_EQ(was.size(), before_[device].captures.size()) << process << " is in every capture";
      std::set<std::optional<int64_t>> values;
      for (const storage::HistoryRow& row : was) values.insert(row.value_kb);
      EXPECT_GT(values.size(), 100u) << process << "'s figure must move between captures";
      testing::ExpectSameTrend(testing::ProcessTrend(*store_, device, process),
                               KeptRows(before_[device].process_trends[process], kept),
                               std::string(process) + " pss_kb");
    }
    // `memfleet report` and `devices` still show the latest capture: farm-2's, below the one before it.
    absl::StatusOr<std::optional<storage::StoredReport>> latest = store_->GetReport(device, "");
    ASSERT_TRUE(latest.ok() && latest->has_value());
    const std::vector<int64_t> times = TimesOf(d);
    EXPECT_EQ((*latest)->capture_id, testing::CaptureId(device, static_cast<int>(times.size()) - 1));
    // The marks say how far the history is thinned.
    absl::StatusOr<storage::RetentionMarks> marks = store_->GetRetentionMarks(device);
    ASSERT_TRUE(marks.ok()) << marks.status();
    EXPECT_EQ(marks->hourly_before, Utc(kNowMs - kFullMs));
    EXPECT_EQ(marks->daily_before, Utc(kNowMs - kHourlyMs));
  }
  EXPECT_EQ(kept_total + run->deleted, captures);

  // Every kept delta decodes against its keyframe: re-accounting reads each kept capture back.
  absl::StatusOr<ReaccountResult> re = ReaccountCaptures(*store_, "");
  ASSERT_TRUE(re.ok()) << re.status();
  EXPECT_EQ(re->failed, 0u) << (re->failures.empty() ? "" : re->failures.front());
  EXPECT_EQ(re->reaccounted, kept_total);

  // A second run at the same time finds nothing more to delete.
  absl::StatusOr<RetentionRun> again = ApplyRetention(*store_, kPolicy, kNowMs, RetentionOptions{});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->deleted, 0u);
}

INSTANTIATE_TEST_SUITE_P(Backends, FarmRetentionTest, testing::kBothBackends, testing::StoreBackendName);

}  // namespace
}  // namespace memfleet::server::farm_retention
