// Retention run twice at once on one PostgreSQL database (ApplyRetention), as two servers sharing the
// database each run their retention worker over a store of its own. Nothing serialises the two runs (no
// advisory lock: each plans from the rows it reads and deletes in its own transactions), so the test holds
// them to what they must do side by side: both end without an error or a failed device; each planned
// capture is deleted, and each planned raw text dropped, by exactly one of them (their counts add up to one
// run's); and the history afterwards is exactly the one a single run leaves on a copy of the same database —
// the same captures kept with the same keyframes and raw text, the same device and process trends, every
// kept capture's report as it was.
//
// The farm: three devices ingested as the server does (engine, a keyframe every 8), a capture every 2 hours
// for 5 days then every 30 minutes for 3, every figure moving (testing::Churned); farm-2 silent for the last
// day and a half. Thinned with full 1 day, hourly 3 days, raw 2 days, in batches of 10 captures so the two
// runs' transactions interleave. The history is ingested once; each round's database is a copy of it
// (CREATE DATABASE ... TEMPLATE), the two runs released together by one future.
#include <chrono>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "absl/strings/str_cat.h"
#include "common/utc_time.h"
#include "nlohmann/json.hpp"
#include "server/history/retention.h"
#include "server/ingest/capture_ingestor.h"
#include "storage/backends/open_store.h"
#include "storage/postgres/pg_connection.h"
#include "tests/support/history_before.h"
#include "tests/support/ingested_history.h"
#include "tests/support/moving_capture.h"
#include "tests/support/postgres_server.h"
#include "tests/support/sample_capture.h"
#include "tests/support/test_paths.h"

namespace memfleet::server::concurrent_retention_test {
namespace {

constexpr int64_t kMinuteMs = 60'000;
constexpr int64_t kHourMs = 60 * kMinuteMs;
constexpr int64_t kDayMs = 24 * kHourMs;
// 2026-11-09T00:00:00Z: the farm's first capture; "now" is 8 days later.
constexpr int64_t kStartMs = int64_t{1'794'182'400'000};
constexpr int64_t kNowMs = kStartMs + 8 * kDayMs;
// Rounds until the two runs have deleted side by side twice, at most this many: in about one round in four
// one run's deletes all come after the other's.
constexpr int kMaxRounds = 10;
const char* const kDevices[] = {"farm-0", "farm-1", "farm-2"};
const char* const kProcesses[] = {"system_server", "com.android.systemui"};

RetentionPolicy Policy() {
  RetentionPolicy policy;
  policy.full = std::chrono::milliseconds(kDayMs);
  policy.hourly = std::chrono::milliseconds(3 * kDayMs);
  policy.raw = std::chrono::milliseconds(2 * kDayMs);
  return policy;
}

RetentionOptions Options() {
  RetentionOptions options;
  options.batch = 10;
  return options;
}

// One device's capture times: every 2 h for 5 days, then every 30 min until an hour ago (farm-2's stop a
// day and a half ago), each device a few minutes after the one before.
std::vector<int64_t> TimesOf(int device) {
  std::vector<int64_t> times;
  const int64_t offset = (5 + device * 7) * kMinuteMs;
  for (int64_t at = kStartMs; at < kStartMs + 5 * kDayMs; at += 2 * kHourMs) times.push_back(at + offset);
  const int64_t end = device == 2 ? kNowMs - 36 * kHourMs : kNowMs - kHourMs;
  for (int64_t at = kStartMs + 5 * kDayMs; at < end; at += 30 * kMinuteMs) times.push_back(at + offset);
  return times;
}

// What a store holds after retention, as the tests compare it.
struct HistoryAfter {
  std::map<std::string, std::pair<std::string, bool>> captures;    // id -> (keyframe id, raw text dropped)
  std::map<std::string, std::vector<storage::HistoryRow>> trends;  // "device" or "device/process"
  std::map<std::string, std::string> reports;                      // id -> report json
};

HistoryAfter ReadHistoryAfter(storage::SqlStore& store) {
  HistoryAfter after;
  for (const char* device : kDevices) {
    absl::StatusOr<std::vector<storage::RetentionRow>> rows = store.RetentionRows(device);
    EXPECT_TRUE(rows.ok()) << rows.status();
    if (!rows.ok()) continue;
    for (const storage::RetentionRow& r : *rows) {
      after.captures[r.capture_id] = {r.keyframe_id, r.raw_dropped};
      absl::StatusOr<std::optional<storage::StoredReport>> report = store.GetReportByCapture(r.capture_id);
      EXPECT_TRUE(report.ok() && report->has_value()) << r.capture_id << " has lost its report";
      if (report.ok() && report->has_value()) after.reports[r.capture_id] = (*report)->report_json;
    }
    after.trends[device] = testing::DeviceTrend(store, device);
    for (const char* process : kProcesses) {
      after.trends[absl::StrCat(device, "/", process)] = testing::ProcessTrend(store, device, process);
    }
  }
  return after;
}

class ConcurrentRetentionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    template_uri_ = testing::NewPostgresDatabase();
    ASSERT_FALSE(template_uri_.empty());
    std::unique_ptr<storage::SqlStore> store = Open(template_uri_);
    ASSERT_NE(store, nullptr);
    const capture::Capture sample = testing::LoadCapture(testing::TestData("captures/qcom-sm8450/tree"));
    ASSERT_NE(sample.FileContent("capture.json"), nullptr);
    DeltaOptions delta;
    delta.keyframe_every = 8;
    CaptureIngestor ingestor(*store, nullptr, nullptr, delta);
    for (int d = 0; d < 3; ++d) {
      const std::vector<int64_t> times = TimesOf(d);
      for (size_t seq = 0; seq < times.size(); ++seq) {
        ASSERT_TRUE(testing::IngestMoved(
            ingestor, *sample.FileContent("capture.json"),
            testing::Churned(sample, static_cast<int>(seq) * 3 + d, testing::Churn::kEverything), kDevices[d],
            static_cast<int>(seq),
            FormatUtcMillis(std::chrono::system_clock::time_point(std::chrono::milliseconds(times[seq])))))
            << kDevices[d] << " " << seq;
      }
    }
    for (const char* device : kDevices) {
      ASSERT_NO_FATAL_FAILURE(testing::ReadHistoryBefore(
          *store, device, std::vector<std::string>(std::begin(kProcesses), std::end(kProcesses)), before_[device]));
    }
    // `store` closes here: PostgreSQL copies a database only while no other session is on it.
  }

  static std::unique_ptr<storage::SqlStore> Open(const std::string& uri) {
    absl::StatusOr<std::unique_ptr<storage::SqlStore>> store = storage::OpenStore(uri);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? *std::move(store) : nullptr;
  }

  // A new database on the same server holding what the ingested one holds, named after it and `suffix`;
  // its URI ("" and a test failure when it cannot be made).
  std::string CopyOfTheHistory(const std::string& suffix) {
    const size_t slash = template_uri_.rfind('/');
    const std::string name = absl::StrCat(template_uri_.substr(slash + 1), "_", suffix);
    absl::StatusOr<std::unique_ptr<storage::PgConnection>> admin =
        storage::PgConnection::Connect(template_uri_.substr(0, slash) + "/postgres");
    EXPECT_TRUE(admin.ok()) << admin.status();
    if (!admin.ok()) return "";
    const absl::Status copied =
        (*admin)->Exec(absl::StrCat("CREATE DATABASE ", name, " TEMPLATE ", template_uri_.substr(slash + 1)));
    EXPECT_TRUE(copied.ok()) << copied;
    return copied.ok() ? template_uri_.substr(0, slash + 1) + name : "";
  }

  std::string template_uri_;
  std::map<std::string, testing::HistoryBefore> before_;  // by device
};

TEST_F(ConcurrentRetentionTest, TwoRunsAtOnceEndWithoutErrorAndLeaveWhatOneRunLeaves) {
  size_t captures = 0;
  for (const auto& [device, history] : before_) captures += history.captures.size();

  // One run alone, on a copy.
  const std::string alone_uri = CopyOfTheHistory("alone");
  ASSERT_FALSE(alone_uri.empty());
  std::unique_ptr<storage::SqlStore> alone_store = Open(alone_uri);
  ASSERT_NE(alone_store, nullptr);
  absl::StatusOr<RetentionRun> alone = ApplyRetention(*alone_store, Policy(), kNowMs, Options());
  ASSERT_TRUE(alone.ok()) << alone.status();
  ASSERT_TRUE(alone->failures.empty()) << alone->failures.front();
  const HistoryAfter want = ReadHistoryAfter(*alone_store);
  alone_store.reset();
  // The policy has something to do on this farm: captures to delete and raw text to drop, in many batches.
  ASSERT_GT(alone->deleted, captures / 2);
  ASSERT_GT(alone->raw_dropped, 20u);
  ASSERT_LT(want.captures.size(), captures);
  // Every kept capture reads as it was before retention.
  for (const auto& [device, history] : before_) {
    for (const auto& [id, b] : history.captures) {
      auto kept = want.reports.find(id);
      if (kept != want.reports.end()) {
        EXPECT_EQ(kept->second, b.report_json) << id;
      }
    }
  }

  int rounds = 0;
  int overlapped = 0;
  int both_deleted = 0;
  for (int round = 0; round < kMaxRounds && both_deleted < 2; ++round) {
    ++rounds;
    SCOPED_TRACE(absl::StrCat("round ", round));
    const std::string uri = CopyOfTheHistory(absl::StrCat("twice_", round));
    ASSERT_FALSE(uri.empty());
    // Two servers' workers: a store, and so connections, of their own each.
    std::unique_ptr<storage::SqlStore> stores[2] = {Open(uri), Open(uri)};
    ASSERT_NE(stores[0], nullptr);
    ASSERT_NE(stores[1], nullptr);
    // A future, not absl::Notification: under ThreadSanitizer, with the annotations common/tsan adds to
    // Debian's absl, a waiter's unlock of the notification's mutex was reported without its lock.
    std::promise<void> go;
    const std::shared_future<void> released = go.get_future().share();
    std::optional<absl::StatusOr<RetentionRun>> runs[2];
    std::chrono::steady_clock::time_point started[2];
    std::chrono::steady_clock::time_point ended[2];
    std::vector<std::thread> workers;
    for (int i = 0; i < 2; ++i) {
      workers.emplace_back([&, i] {
        released.wait();
        started[i] = std::chrono::steady_clock::now();
        runs[i] = ApplyRetention(*stores[i], Policy(), kNowMs, Options());
        ended[i] = std::chrono::steady_clock::now();
      });
    }
    go.set_value();
    for (std::thread& t : workers) t.join();

    size_t deleted = 0;
    size_t raw_dropped = 0;
    for (int i = 0; i < 2; ++i) {
      ASSERT_TRUE(runs[i].has_value());
      ASSERT_TRUE(runs[i]->ok()) << "run " << i << ": " << runs[i]->status();
      const RetentionRun& run = **runs[i];
      EXPECT_TRUE(run.failures.empty()) << "run " << i << ": " << run.failures.front();
      EXPECT_EQ(run.devices, 3u);
      deleted += run.deleted;
      raw_dropped += run.raw_dropped;
    }
    // Each capture deleted once and each raw text dropped once, by one run or the other.
    EXPECT_EQ(deleted, alone->deleted) << (*runs[0])->deleted << " + " << (*runs[1])->deleted;
    EXPECT_EQ(raw_dropped, alone->raw_dropped) << (*runs[0])->raw_dropped << " + " << (*runs[1])->raw_dropped;
    if (started[0] < ended[1] && started[1] < ended[0]) ++overlapped;
    if ((*runs[0])->deleted > 0 && (*runs[1])->deleted > 0) ++both_deleted;

    const HistoryAfter got = ReadHistoryAfter(*stores[0]);
    EXPECT_EQ(got.captures, want.captures);
    EXPECT_EQ(got.reports, want.reports);
    ASSERT_EQ(got.trends.size(), want.trends.size());
    for (const auto& [what, rows] : want.trends) {
      auto it = got.trends.find(what);
      ASSERT_NE(it, got.trends.end()) << what;
      testing::ExpectSameTrend(it->second, rows, what);
    }
  }
  // The runs were at work at the same time in every round, and in two of them both deleted captures: the
  // one did not find the history already thinned by the other.
  EXPECT_EQ(overlapped, rounds);
  EXPECT_EQ(both_deleted, 2) << "the two runs deleted side by side in " << both_deleted << " of " << rounds
                             << " rounds";
}

}  // namespace
}  // namespace memfleet::server::concurrent_retention_test
