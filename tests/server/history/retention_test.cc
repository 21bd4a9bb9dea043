// Retention on both backends (server/history/retention.h), a real SQLite file and a database on a real
// PostgreSQL (tests/support/store_backends.h): captures of the qcom-sm8450 sample ingested as the server does
// (engine, delta storage) at simulated times, then thinned. Checks what a dry run leaves
// (everything), what a run deletes and keeps (one capture an hour past the full window, the answer to a
// recorded sweep, keyframes of kept deltas), what pins a capture and what does not (a sweep's labels and
// a sweep that asked the device do; an agent's labels and a sweep id that never asked it do not), that
// every kept capture still decodes and re-accounts, that the reports and trends answer for the kept ones,
// and that the freed space is given back: to the file system on SQLite, to new captures on PostgreSQL
// (VACUUM). Several devices over weeks: farm_retention_test.cc; farm-sized histories through the real
// binaries: tests/integration/retention_integrationtest.cc.
#include "server/history/retention.h"

#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "common/utc_time.h"
#include "server/ingest/capture_ingestor.h"
#include "server/history/reaccount.h"
#include "server/history/retention_worker.h"
#include "storage/backends/open_store.h"
#include "storage/postgres/pg_connection.h"
#include "storage/sqlite/sqlite_db.h"
#include "tests/support/manual_clock.h"
#include "tests/support/moving_capture.h"
#include "tests/support/sample_capture.h"
#include "tests/support/store_backends.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace memfleet::server {
namespace retention_test {
namespace {

constexpr char kDevice[] = "sim-qcom-101";
constexpr int64_t kMinuteMs = 60'000;
constexpr int64_t kHourMs = 60 * kMinuteMs;
constexpr int64_t kDayMs = 24 * kHourMs;
// 2026-11-30T00:00:00Z: the first capture; one every 20 minutes for 3 days.
constexpr int64_t kStartMs = int64_t{1'795'996'800'000};
constexpr int kCaptures = 3 * 24 * 3;
constexpr int kSweepSeq = 10;  // 03:20 on the first day, a sweep's capture

class RetentionTest : public testing::SqlStoreOnBackendTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(SqlStoreOnBackendTest::SetUp());
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
    // The sweep that asked this device for its capture kSweepSeq, as the coordinator records it.
    ASSERT_TRUE(RecordSweep("sweep-1", {{kDevice, "stored"}}).ok());
  }

  absl::Status RecordSweep(const std::string& sweep_id, const std::map<std::string, std::string>& states) {
    storage::SweepRecord sweep;
    sweep.sweep_id = sweep_id;
    sweep.started_at = "2026-11-30T03:19:00.000Z";
    sweep.finished_at = "2026-11-30T03:21:00.000Z";
    sweep.states = states;
    return store_->PutSweep(sweep);
  }

  // Runs `sql` on the database directly: a history written before labels had a source, or by a server
  // that stored any sweep id an agent named.
  void Exec(const std::string& sql) {
    if (GetParam() == testing::StoreBackend::kPostgres) {
      absl::StatusOr<std::unique_ptr<storage::PgConnection>> db = storage::PgConnection::Connect(location_);
      ASSERT_TRUE(db.ok()) << db.status();
      ASSERT_TRUE((*db)->Exec(sql).ok()) << sql;
      return;
    }
    absl::StatusOr<storage::SqliteDb> db = storage::SqliteDb::Open(location_, SQLITE_OPEN_READWRITE);
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE(db->Exec(sql).ok()) << sql;
  }

  // PostgreSQL: the bytes of the history's tables (rows and their out-of-line values, not indexes).
  int64_t PgHistoryTableBytes() {
    absl::StatusOr<std::unique_ptr<storage::PgConnection>> db = storage::PgConnection::Connect(location_);
    EXPECT_TRUE(db.ok()) << db.status();
    if (!db.ok()) return 0;
    absl::StatusOr<std::optional<int64_t>> bytes =
        storage::QueryFirst(**db,
                            "SELECT pg_table_size('captures') + pg_table_size('device_reports') + "
                            "pg_table_size('report_blobs')",
                            {}, [](const storage::SqlRow& row) { return row.ColumnInt64(0); });
    EXPECT_TRUE(bytes.ok() && bytes->has_value()) << bytes.status();
    return bytes.ok() ? bytes->value_or(0) : 0;
  }

  // Ingests `n` more captures of the moving sample, from `first_seq` on, at their times.
  void IngestMore(int first_seq, int n) {
    const capture::Capture sample = testing::LoadCapture(testing::TestData("captures/qcom-sm8450/tree"));
    DeltaOptions delta;
    delta.keyframe_every = 8;
    CaptureIngestor ingestor(*store_, nullptr, nullptr, delta);
    for (int seq = first_seq; seq < first_seq + n; ++seq) {
      AssembledCapture a;
      a.device_id = kDevice;
      a.capture_id = testing::CaptureId(kDevice, seq);
      a.captured_at = FormatUtcMillis(std::chrono::system_clock::time_point(std::chrono::milliseconds(At(seq))));
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
};

// A file of an older SQLite schema, migrated when opened: SQLite only.
class RetentionOnSqliteTest : public RetentionTest {};
// How PostgreSQL gives the space back (SQLite's file shrinks: ThinsByAge...).
class RetentionOnPostgresTest : public RetentionTest {};

// Full resolution for the last day, hourly for the day before, daily before that; "now" is the end of
// the third day, so day 3 stays whole, day 2 keeps one an hour, day 1 one capture (plus pins).
const RetentionPolicy kPolicy{std::chrono::hours(24), std::chrono::hours(48)};
constexpr int64_t kNowMs = kStartMs + 3 * kDayMs;

TEST_P(RetentionTest, ADryRunDeletesNothingAndCountsWhatWouldGo) {
  RetentionOptions options;
  options.dry_run = true;
  absl::StatusOr<RetentionRun> run = ApplyRetention(*store_, kPolicy, kNowMs, options);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->captures_before, static_cast<size_t>(kCaptures));
  EXPECT_GT(run->deleted, 100u);
  EXPECT_EQ(StoredIds().size(), static_cast<size_t>(kCaptures));
  EXPECT_NE(DescribeRetentionRun(*run, true).find("would be deleted"), std::string::npos);
}

TEST_P(RetentionTest, ThinsByAgeKeepsPinsAndKeyframesAndEverythingLeftStillReads) {
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
  if (GetParam() == testing::StoreBackend::kSqlite) {
    // The space went back to the file system.
    EXPECT_GT(run->file_bytes_freed, 0);
    EXPECT_FALSE(run->space_kept_for_new_captures);
    EXPECT_THAT(DescribeRetentionRun(*run, false), ::testing::HasSubstr("MB returned to the file system"));
  } else {
    // PostgreSQL keeps it for the next captures, and says so rather than a bare "0.0 MB returned".
    EXPECT_TRUE(run->space_kept_for_new_captures);
    EXPECT_THAT(DescribeRetentionRun(*run, false),
                ::testing::HasSubstr("their space kept by PostgreSQL for the next captures"));
  }

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

TEST_P(RetentionTest, OnlyASweepThatAskedTheDeviceOrASweepsLabelPinsACapture) {
  // Day 1, none its day's peak nor a keyframe (every 8th): only what pins it could keep it.
  const auto id = [](int seq) { return "'" + testing::CaptureId(kDevice, seq) + "'"; };
  Exec("INSERT INTO capture_labels (capture_id, key, value, source) VALUES (" + id(5) + ", 'run', 'R1', 'sweep')");
  Exec("INSERT INTO capture_labels (capture_id, key, value, source) VALUES (" + id(6) + ", 'run', 'R1', 'agent')");
  Exec("INSERT INTO capture_labels (capture_id, key, value, source) VALUES (" + id(7) + ", 'rack', '7', 'agent')");
  // Sweep ids as an agent could name them, stored by a server that did not check them.
  ASSERT_TRUE(RecordSweep("sweep-other", {{"another-device", "stored"}}).ok());
  ASSERT_TRUE(RecordSweep("sweep-offline", {{kDevice, "offline"}}).ok());
  ASSERT_TRUE(RecordSweep("sweep-asked", {{kDevice, "stored"}}).ok());
  Exec("UPDATE captures SET sweep_id = 'sweep-never-was' WHERE capture_id = " + id(9));
  Exec("UPDATE captures SET sweep_id = 'sweep-other' WHERE capture_id = " + id(11));
  Exec("UPDATE captures SET sweep_id = 'sweep-offline' WHERE capture_id = " + id(12));
  Exec("UPDATE captures SET sweep_id = 'sweep-asked' WHERE capture_id = " + id(13));

  absl::StatusOr<RetentionRun> run = ApplyRetention(*store_, kPolicy, kNowMs, RetentionOptions{});
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(run->failures.empty());
  const std::set<std::string> kept = StoredIds();
  EXPECT_EQ(kept.count(testing::CaptureId(kDevice, 5)), 1u) << "a sweep's label pins it";
  EXPECT_EQ(kept.count(testing::CaptureId(kDevice, 13)), 1u) << "the sweep that asked the device pins it";
  EXPECT_EQ(kept.count(testing::CaptureId(kDevice, kSweepSeq)), 1u);
  for (int seq : {6, 7, 9, 11, 12}) {
    EXPECT_EQ(kept.count(testing::CaptureId(kDevice, seq)), 0u) << seq << ": an agent's label or a sweep id that "
                                                                << "never asked this device pins nothing";
  }
}

TEST_P(RetentionOnSqliteTest, LabelsStoredBeforeTheirSourceWasRecordedCountAsTheSweepsOnlyOnASweepsAnswer) {
  // A file of schema version 16 (no source column), migrated when opened: a capture's labels count as a
  // sweep's only when its sweep had asked its device. Version 19's process blocks become version 16's
  // tables, left empty, and version 20's tiers, version 21's sweep servers and version 22's index of sweep
  // captures go: only the labels are read here.
  store_.reset();
  {
    absl::StatusOr<storage::SqliteDb> db = storage::SqliteDb::Open(location_, SQLITE_OPEN_READWRITE);
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE(db->Exec("ALTER TABLE device_reports DROP COLUMN tier; ALTER TABLE devices DROP COLUMN tier; "
                         "ALTER TABLE devices DROP COLUMN agent_tier; "
                         "ALTER TABLE device_reports DROP COLUMN processes; "
                         "ALTER TABLE device_reports DROP COLUMN process_count; "
                         "CREATE TABLE process_samples (capture_no INTEGER, name_no INTEGER, pid INTEGER, "
                         "total_kb INTEGER, pss_kb INTEGER, swap_pss_kb INTEGER, gfxdev_kb INTEGER, gl_kb INTEGER, "
                         "dma_kb INTEGER, native_graphics_kb INTEGER, non_graphics_kb INTEGER, "
                         "graphics_dma_kb INTEGER); "
                         "CREATE TABLE device_process_names (device_no INTEGER, name_no INTEGER); "
                         "CREATE TABLE device_numbers (device_no INTEGER, device_id TEXT); "
                         "ALTER TABLE devices DROP COLUMN retired_at; ALTER TABLE sweeps DROP COLUMN server_id; "
                         "DROP INDEX captures_swept_by_device; "
                         "DROP INDEX capture_labels_by_key_value; ALTER TABLE capture_labels DROP COLUMN source; "
                         "CREATE INDEX capture_labels_by_key_value ON capture_labels (key, value, capture_id); "
                         "UPDATE schema_version SET version = 16")
                    .ok());
    const auto label = [](int seq) {
      return "INSERT INTO capture_labels (capture_id, key, value) VALUES ('" + testing::CaptureId(kDevice, seq) +
             "', 'run', 'R1');";
    };
    ASSERT_TRUE(db->Exec(label(kSweepSeq) + label(5) +
                         "UPDATE captures SET sweep_id = 'sweep-never-was' WHERE "
                         "capture_id = '" +
                         testing::CaptureId(kDevice, 5) + "'")
                    .ok());
  }
  absl::StatusOr<std::unique_ptr<storage::SqlStore>> s = storage::OpenStore(location_);
  ASSERT_TRUE(s.ok()) << s.status();
  store_ = std::move(*s);
  absl::StatusOr<storage::LabelSet> answer = store_->CaptureLabels(testing::CaptureId(kDevice, kSweepSeq));
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(*answer, (storage::LabelSet{{{"run", "R1"}}, {}}));
  absl::StatusOr<storage::LabelSet> claimed = store_->CaptureLabels(testing::CaptureId(kDevice, 5));
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  EXPECT_EQ(*claimed, (storage::LabelSet{{}, {{"run", "R1"}}}));
}

TEST_P(RetentionTest, DeletingAKeyframeAKeptDeltaNeedsFailsAndDeletesNothing) {
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

TEST_P(RetentionTest, TheServersWorkerThinsAtOnceAndAgainEachIntervalOnItsClock) {
  testing::ManualSteadyClock clock;
  std::atomic<int64_t> now_ms{kNowMs};
  RetentionWorkerOptions options;
  options.db_path = location_;
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

// PostgreSQL's VACUUM (ReturnFreePages) truncates only free pages at a table's end, which the oldest captures
// are not: what it gives back is their space, to the captures stored next. Without it (return_free_pages
// false) the next captures are appended after the dead rows of the deleted ones, and this test fails.
TEST_P(RetentionOnPostgresTest, TheSpaceOfDeletedCapturesHoldsTheNextOnes) {
  const int64_t ingested = PgHistoryTableBytes();
  ASSERT_GT(ingested, 0);
  absl::StatusOr<RetentionRun> run = ApplyRetention(*store_, kPolicy, kNowMs, RetentionOptions{});
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_GT(run->deleted, 100u);
  const int64_t thinned = PgHistoryTableBytes();
  // A third of a day more, far fewer captures than were deleted; the tables grow by less than half of what
  // they cost when first stored.
  constexpr int kMore = 24;
  IngestMore(kCaptures, kMore);
  const int64_t grown = PgHistoryTableBytes() - thinned;
  RecordProperty("grown_bytes", std::to_string(grown));
  EXPECT_LT(grown, ingested / kCaptures * kMore / 2)
      << "stored " << ingested << " B for " << kCaptures << " captures; " << kMore << " more grew the tables by "
      << grown << " B after " << run->deleted << " were deleted";
}

INSTANTIATE_TEST_SUITE_P(Backends, RetentionTest, testing::kBothBackends, testing::StoreBackendName);
INSTANTIATE_TEST_SUITE_P(Sqlite, RetentionOnSqliteTest, ::testing::Values(testing::StoreBackend::kSqlite),
                         testing::StoreBackendName);
INSTANTIATE_TEST_SUITE_P(Postgres, RetentionOnPostgresTest, ::testing::Values(testing::StoreBackend::kPostgres),
                         testing::StoreBackendName);

}  // namespace
}  // namespace retention_test
}  // namespace memfleet::server
