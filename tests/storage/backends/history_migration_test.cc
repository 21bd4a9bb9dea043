// memfleet-server migrate (storage/backends/history_migration.h), with the real binary: a real SQLite file
// filled through the real ingest (CaptureIngestor: engine, deltas, labels, sweeps) and the store's own
// writes for what ingest does not make (tokens, baselines, dropped captures, retention marks), copied into
// a real PostgreSQL; then every query answers the same on both, re-accounting the copy decodes every
// delta, and a copy that differs, a non-empty target or a file that is not memfleet's fails.
#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "report/report_json.h"
#include "server/ingest/capture_ingestor.h"
#include "server/history/reaccount.h"
#include "server/security/token.h"
#include "storage/postgres/pg_store.h"
#include "storage/sqlite/sqlite_db.h"
#include "storage/sqlite/sqlite_store.h"
#include "tests/support/load_tree.h"
#include "tests/support/moving_capture.h"
#include "tests/support/postgres_server.h"
#include "tests/support/sample_capture.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace memfleet::server {
namespace {

constexpr int kRounds = 7;  // captures per device
constexpr char kSweep[] = "sweep-20261130-0900";

class HistoryMigrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    sqlite_path_ = dir_.path() + "/memfleet.db";
    uri_ = testing::NewPostgresDatabase();
    ASSERT_FALSE(uri_.empty());
    FillSqlite();
  }

  // Two devices of the qcom sample, kRounds captures each a minute apart, every third stored whole and the
  // others as deltas; bench-b's carry labels and its last two a sweep's id.
  void FillSqlite() {
    absl::StatusOr<std::unique_ptr<storage::SqlStore>> store = storage::OpenSqliteStore(sqlite_path_);
    ASSERT_TRUE(store.ok()) << store.status();
    capture::Capture sample = testing::LoadCapture(testing::TestData("captures/qcom-sm8450/tree").c_str());
    ASSERT_GT(sample.size(), 100u);
    DeltaOptions delta;
    delta.keyframe_every = 3;
    CaptureIngestor ingestor(
        **store, nullptr, [] { return std::string("2026-11-30T12:00:00.000Z"); }, delta);
    for (int seq = 0; seq < kRounds; ++seq) {
      for (const std::string device : {"bench-a", "bench-b"}) {
        AssembledCapture a;
        a.device_id = device;
        a.capture_id = testing::CaptureId(device, seq);
        char at[48];
        std::snprintf(at, sizeof(at), "2026-11-30T08:%02d:00.000Z", seq);
        a.captured_at = at;
        a.capture = testing::Later(sample, seq);
        const bool labelled = device == "bench-b";
        // The sample's own header, as this device's, on build 0 or 1, with the rack label on bench-b.
        nlohmann::json header = nlohmann::json::parse(*sample.FileContent("capture.json"));
        header["device_id"] = device;
        header["captured_at"] = at;
        header["build_fingerprint"] = "lab/build:" + std::to_string(seq / 4);
        if (labelled) header["labels"] = {{"rack", "7"}};
        a.capture.AddFile("capture.json", header.dump());
        if (labelled && seq >= kRounds - 2) a.sweep_id = kSweep;
        v1::ServerMessage m = ingestor.Ingest(std::move(a));
        ASSERT_TRUE(m.has_ack()) << m.DebugString();
      }
    }
    storage::DeviceRecord hello;
    hello.device_id = "bench-a";
    hello.model = "Xiaomi 12";
    hello.last_seen_at = "2026-11-30T08:30:00Z";
    hello.dropped_captures = 4;
    hello.clock_skew_s = -3;
    ASSERT_TRUE((*store)->UpsertDevice(hello).ok());
    reader_hash_ = security::Sha256Hex("reader-secret");
    ASSERT_TRUE((*store)->PutToken({"ci-reader", "read", "", reader_hash_, "2026-11-29T10:00:00Z", ""}).ok());
    ASSERT_TRUE(
        (*store)
            ->PutToken({"bench-a", "agent", "bench-a", security::Sha256Hex("agent-secret"), "2026-11-29T10:01:00Z", ""})
            .ok());
    ASSERT_TRUE((*store)->RevokeToken("bench-a", "2026-11-30T07:00:00Z").value());
    ASSERT_EQ((*store)->PutBaseline("lab", "2026-11-29T11:00:00Z", "{\"name\": \"lab\", \"v\": 1}").value(), 1);
    ASSERT_EQ((*store)->PutBaseline("lab", "2026-11-29T12:00:00Z", "{\"name\": \"lab\", \"v\": 2}").value(), 2);
    storage::SweepRecord sweep{
        kSweep, "2026-11-30T08:05:00Z", "rack=7", {{"bench-b", "stored"}}, "2026-11-30T08:07:00Z", "lab-a:7070"};
    ASSERT_TRUE((*store)->PutSweep(sweep).ok());
    ASSERT_TRUE((*store)->RecordRetention("bench-a", {"2026-11-01T00:00:00Z", ""}).ok());
  }

  // memfleet-server migrate with `extra` flags; its exit code, its output in `log`.
  int Migrate(const std::vector<std::string>& extra, std::string* log, const std::string& from = "") {
    std::vector<std::string> argv = {testing::Bin("memfleet-server"),    "migrate", "--from",
                                     from.empty() ? sqlite_path_ : from, "--to",    uri_};
    argv.insert(argv.end(), extra.begin(), extra.end());
    testing::Subprocess migrate(argv, dir_.path() + "/migrate-" + std::to_string(++runs_) + ".log");
    const int code = migrate.WaitExit(std::chrono::seconds(120));
    *log = migrate.Log();
    return code;
  }

  std::unique_ptr<storage::Store> OpenSqlite() {
    absl::StatusOr<std::unique_ptr<storage::Store>> s = storage::OpenSqliteStore(sqlite_path_);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *std::move(s) : nullptr;
  }
  std::unique_ptr<storage::SqlStore> OpenPostgres() {
    absl::StatusOr<std::unique_ptr<storage::SqlStore>> s = storage::OpenPgStore(uri_);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *std::move(s) : nullptr;
  }

  testing::TempDir dir_{"memfleet-migrate"};
  std::string sqlite_path_;
  std::string uri_;
  std::string reader_hash_;
  int runs_ = 0;
};

nlohmann::json Parsed(const std::string& text) {
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

// A StoredReport as comparable text: its identity and its parsed report.
std::string ReportText(const storage::StoredReport& r) {
  return r.capture_id + "|" + r.device_id + "|" + r.captured_at + "|" + r.build_fingerprint + "|" +
         Parsed(r.report_json).dump();
}
std::string ReportsText(const absl::StatusOr<std::vector<storage::StoredReport>>& rows) {
  if (!rows.ok()) return rows.status().ToString();
  std::string text;
  for (const storage::StoredReport& r : *rows) text += ReportText(r) + "\n";
  return text;
}
std::string ReportText(const absl::StatusOr<std::optional<storage::StoredReport>>& r) {
  if (!r.ok()) return r.status().ToString();
  return r->has_value() ? ReportText(**r) : "none";
}
std::string HistoryText(const absl::StatusOr<std::vector<storage::HistoryRow>>& rows) {
  if (!rows.ok()) return rows.status().ToString();
  std::string text;
  for (const storage::HistoryRow& h : *rows) {
    text += h.capture_id + "|" + h.captured_at + "|" + std::to_string(h.pid) + "|" +
            (h.value_kb.has_value() ? std::to_string(*h.value_kb) : "null") + "\n";
  }
  return text;
}
std::string DeviceText(const storage::DeviceRecord& d) {
  return d.device_id + "|" + d.model + "|" + d.build_fingerprint + "|" + d.platform + "|" + d.last_seen_at + "|" +
         std::to_string(d.dropped_captures) + "|" + (d.clock_skew_s ? std::to_string(*d.clock_skew_s) : "null");
}
std::string FleetText(const absl::StatusOr<std::vector<storage::FleetValueRow>>& rows) {
  if (!rows.ok()) return rows.status().ToString();
  std::string text;
  for (const storage::FleetValueRow& v : *rows) {
    text += DeviceText(v.device) + "|" + v.capture_id + "|" + v.captured_at + "|" +
            (v.value_kb.has_value() ? std::to_string(*v.value_kb) : "null") + "\n";
  }
  return text;
}

TEST_F(HistoryMigrationTest, EveryQueryAnswersTheSameOnBothAfterTheCopy) {
  std::string log;
  ASSERT_EQ(Migrate({}, &log), 0) << log;
  EXPECT_NE(log.find("copied 2 devices, 14 captures, 2 tokens, 2 baseline versions, 1 sweeps, 1 retention marks"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("checked captures: 14 in SQLite, 14 in PostgreSQL"), std::string::npos) << log;
  EXPECT_NE(log.find("checked labels: 7 in SQLite, 7 in PostgreSQL"), std::string::npos) << log;
  EXPECT_NE(log.find("checked reports: 14 of 14 captures compared"), std::string::npos) << log;
  EXPECT_NE(log.find("the PostgreSQL history matches the SQLite file"), std::string::npos) << log;

  std::unique_ptr<storage::Store> sqlite = OpenSqlite();
  std::unique_ptr<storage::SqlStore> pg = OpenPostgres();
  ASSERT_NE(sqlite, nullptr);
  ASSERT_NE(pg, nullptr);
  for (storage::QueryStore* store :
       {static_cast<storage::QueryStore*>(sqlite.get()), static_cast<storage::QueryStore*>(pg.get())}) {
    absl::StatusOr<std::vector<storage::DeviceSummaryRow>> devices = store->ListDevices();
    ASSERT_TRUE(devices.ok()) << devices.status();
    ASSERT_EQ(devices->size(), 2u);
    EXPECT_EQ((*devices)[0].device.dropped_captures, 4u);  // the Hello's drops, counted once
    EXPECT_EQ((*devices)[0].capture_count, static_cast<uint64_t>(kRounds));
  }
  for (const std::string device : {"bench-a", "bench-b"}) {
    EXPECT_EQ(DeviceText(*sqlite->GetDevice(device).value()), DeviceText(*pg->GetDevice(device).value()));
    EXPECT_EQ(ReportText(sqlite->GetReport(device, "")), ReportText(pg->GetReport(device, ""))) << device;
    EXPECT_EQ(ReportText(sqlite->GetReport(device, "2026-11-30T08:03:30Z")),
              ReportText(pg->GetReport(device, "2026-11-30T08:03:30Z")));
    EXPECT_EQ(HistoryText(sqlite->DeviceHistory(device, "total_kb", "", 0)),
              HistoryText(pg->DeviceHistory(device, "total_kb", "", 0)));
    EXPECT_EQ(HistoryText(sqlite->ProcessHistory(device, "system_server", "pss_kb", "2026-11-30T08:02:00Z", 0)),
              HistoryText(pg->ProcessHistory(device, "system_server", "pss_kb", "2026-11-30T08:02:00Z", 0)));
    EXPECT_EQ(sqlite->GetRetentionMarks(device)->hourly_before, pg->GetRetentionMarks(device)->hourly_before);
  }
  // The trend is not empty: the comparison above compared figures.
  EXPECT_EQ(pg->ProcessHistory("bench-a", "system_server", "pss_kb", "", 0)->size(), static_cast<size_t>(kRounds));
  EXPECT_EQ(FleetText(sqlite->LatestPerDevice("total_kb", "")), FleetText(pg->LatestPerDevice("total_kb", "")));
  EXPECT_EQ(FleetText(sqlite->LatestPerDevice("pss_kb", "system_server")),
            FleetText(pg->LatestPerDevice("pss_kb", "system_server")));
  EXPECT_EQ(ReportsText(sqlite->LatestReportsSince("")), ReportsText(pg->LatestReportsSince("")));
  EXPECT_EQ(ReportsText(sqlite->LatestReportsPerBuild("")), ReportsText(pg->LatestReportsPerBuild("")));
  EXPECT_EQ(pg->LatestReportsPerBuild("")->size(), 4u);  // two devices on builds 0 and 1
  EXPECT_EQ(ReportsText(sqlite->LatestReportsOfSweep(kSweep)), ReportsText(pg->LatestReportsOfSweep(kSweep)));
  EXPECT_EQ(pg->LabelledCaptures(storage::LabelSet{{}, {{"rack", "7"}}})->size(), static_cast<size_t>(kRounds));
  EXPECT_EQ(pg->GetSweep(kSweep).value()->states.at("bench-b"), "stored");
  EXPECT_EQ(pg->GetSweep(kSweep).value()->server_id, "lab-a:7070");
  EXPECT_EQ(pg->GetBaseline(1).value()->raw_text, "{\"name\": \"lab\", \"v\": 1}");
  EXPECT_EQ(pg->GetBaseline(0).value()->version, 2);

  // Tokens authenticate the same: the reader's hash finds it, the agent's is still revoked.
  absl::StatusOr<std::optional<storage::TokenRecord>> reader = pg->FindTokenByHash(reader_hash_);
  ASSERT_TRUE(reader.ok() && reader->has_value());
  EXPECT_EQ((*reader)->name, "ci-reader");
  EXPECT_EQ((*reader)->revoked_at, "");
  absl::StatusOr<std::optional<storage::TokenRecord>> agent = pg->FindTokenByHash(security::Sha256Hex("agent-secret"));
  ASSERT_TRUE(agent.ok() && agent->has_value());
  EXPECT_EQ((*agent)->revoked_at, "2026-11-30T07:00:00.000Z");  // stored to the millisecond

  // Every delta was copied with its keyframe: re-accounting the copy decodes all 14.
  absl::StatusOr<ReaccountResult> reaccounted = ReaccountCaptures(*pg, "");
  ASSERT_TRUE(reaccounted.ok()) << reaccounted.status();
  EXPECT_EQ(reaccounted->reaccounted, 14u);
  EXPECT_EQ(reaccounted->failed, 0u);
}

TEST_F(HistoryMigrationTest, ANonEmptyTargetIsRefusedUnlessResumed) {
  std::string log;
  ASSERT_EQ(Migrate({}, &log), 0) << log;
  EXPECT_EQ(Migrate({}, &log), 2) << log;
  EXPECT_NE(log.find("already holds a history"), std::string::npos) << log;
  EXPECT_EQ(Migrate({"--resume"}, &log), 0) << log;
  EXPECT_NE(log.find("copied 0 devices, 0 captures"), std::string::npos) << log;
  EXPECT_NE(log.find("already there: 2 devices, 14 captures, 2 tokens, 2 baseline versions"), std::string::npos) << log;
  std::unique_ptr<storage::SqlStore> pg = OpenPostgres();
  ASSERT_NE(pg, nullptr);
  EXPECT_EQ(pg->GetDevice("bench-a").value()->dropped_captures, 4u);  // not added twice
}

TEST_F(HistoryMigrationTest, AChangedReportOrTokenInTheCopyIsFound) {
  std::string log;
  ASSERT_EQ(Migrate({}, &log), 0) << log;
  const std::string first = testing::CaptureId("bench-a", 0);  // the oldest: always sampled
  {
    std::unique_ptr<storage::SqlStore> pg = OpenPostgres();
    ASSERT_NE(pg, nullptr);
    absl::StatusOr<std::optional<storage::StoredReport>> stored = pg->GetReportByCapture(first);
    ASSERT_TRUE(stored.ok() && stored->has_value());
    absl::StatusOr<report::Report> report = report::ReportFromJson((*stored)->report_json);
    ASSERT_TRUE(report.ok()) << report.status();
    report->device.total_kb = report->device.total_kb.value_or(0) + 1;
    ASSERT_TRUE(pg->ReplaceReport(first, *report, report::ReportToJson(*report)).ok());
    ASSERT_TRUE(pg->RevokeToken("ci-reader", "2026-12-01T00:00:00Z").value());
  }
  EXPECT_EQ(Migrate({"--verify-only"}, &log), 1) << log;
  EXPECT_NE(log.find("MISMATCH capture " + first + ": the reports differ (parsed JSON)"), std::string::npos) << log;
  EXPECT_NE(log.find("MISMATCH token ci-reader differs"), std::string::npos) << log;
  EXPECT_NE(log.find("does NOT match"), std::string::npos) << log;
}

// A capture stored before the store kept tiers has none (NULL, unknown: docs/accounting.md section 9);
// its report, read by the engine, would say kernel. The copy keeps the stored tier as it is: unknown stays
// unknown (and so does its device's), a known tier is copied. bench-b's captures are of the qcom-sm8450
// tree, whose expected.json (written before tiers) is of the kernel tier.
TEST_F(HistoryMigrationTest, EachCaptureKeepsItsStoredTierUnknownIncluded) {
  {
    absl::StatusOr<storage::SqliteDb> db = storage::SqliteDb::Open(sqlite_path_, SQLITE_OPEN_READWRITE);
    ASSERT_TRUE(db.ok()) << db.status();
    absl::Status pre_tier = db->Exec(
        "UPDATE device_reports SET tier = NULL WHERE device_id = 'bench-a';"
        "UPDATE devices SET tier = NULL WHERE device_id = 'bench-a'");
    ASSERT_TRUE(pre_tier.ok()) << pre_tier;
  }
  std::string log;
  ASSERT_EQ(Migrate({}, &log), 0) << log;
  std::unique_ptr<storage::SqlStore> pg = OpenPostgres();
  ASSERT_NE(pg, nullptr);
  const nlohmann::json expected =
      Parsed(testing::ReadFileForTest(testing::TestData("captures/qcom-sm8450/expected.json")));
  ASSERT_FALSE(expected["device"].contains("tier"));  // before tiers: the kernel tier
  for (int seq = 0; seq < kRounds; ++seq) {
    for (const auto& [device, tier] : {std::pair<std::string, std::string>{"bench-a", ""}, {"bench-b", "kernel"}}) {
      const std::string id = testing::CaptureId(device, seq);
      absl::StatusOr<std::optional<storage::StoredReport>> copied = pg->GetReportByCapture(id);
      ASSERT_TRUE(copied.ok() && copied->has_value()) << id;
      EXPECT_EQ((*copied)->tier, tier) << id;
    }
  }
  EXPECT_EQ(pg->GetDevice("bench-a").value()->tier, "");
  EXPECT_EQ(pg->GetDevice("bench-b").value()->tier, "kernel");
  // The check after the copy compares the stored tiers too: it passed.
  EXPECT_NE(log.find("the PostgreSQL history matches the SQLite file"), std::string::npos) << log;
}

TEST_F(HistoryMigrationTest, CapturesBeyondTheRawWindowAreCopiedWithoutTheirRawText) {
  // bench-a's first keyframe and its two deltas, as `--retain-raw-days 30` leaves them: deltas first.
  const std::string keyframe = testing::CaptureId("bench-a", 0);
  const std::vector<std::string> deltas = {testing::CaptureId("bench-a", 1), testing::CaptureId("bench-a", 2)};
  std::vector<std::string> reports_before;
  {
    absl::StatusOr<std::unique_ptr<storage::SqlStore>> store = storage::OpenSqliteStore(sqlite_path_);
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_EQ((*store)->GetRawCapture(deltas[0]).value()->raw_base, keyframe);
    ASSERT_EQ((*store)->DropRawCaptures(deltas, 30).value(), 2u);
    ASSERT_EQ((*store)->DropRawCaptures({keyframe}, 30).value(), 1u);
    for (const std::string& id : {keyframe, deltas[0], deltas[1]}) {
      reports_before.push_back(ReportText((*store)->GetReportByCapture(id)));
    }
  }
  std::string log;
  ASSERT_EQ(Migrate({}, &log), 0) << log;
  EXPECT_NE(log.find("the PostgreSQL history matches the SQLite file"), std::string::npos) << log;
  std::unique_ptr<storage::SqlStore> pg = OpenPostgres();
  ASSERT_NE(pg, nullptr);
  size_t i = 0;
  for (const std::string& id : {keyframe, deltas[0], deltas[1]}) {
    absl::StatusOr<std::optional<storage::CaptureStore::RawCapture>> raw = pg->GetRawCapture(id);
    ASSERT_TRUE(raw.ok() && raw->has_value()) << id;
    EXPECT_EQ((*raw)->raw_codec, "dropped:30") << id;
    EXPECT_TRUE((*raw)->raw_blob.empty()) << id;
    EXPECT_EQ((*raw)->raw_base, id == keyframe ? "" : keyframe) << id;
    EXPECT_EQ(storage::RawTextKept(**raw).code(), absl::StatusCode::kFailedPrecondition) << id;
    EXPECT_EQ(ReportText(pg->GetReportByCapture(id)), reports_before[i++]) << id;
  }
  // Re-accounting the copy: the other captures, every delta against its keyframe; these three skipped.
  absl::StatusOr<ReaccountResult> re = ReaccountCaptures(*pg, "");
  ASSERT_TRUE(re.ok()) << re.status();
  EXPECT_EQ(re->failed, 0u) << (re->failures.empty() ? "" : re->failures.front());
  EXPECT_EQ(re->skipped_raw_dropped, 3u);
  EXPECT_EQ(re->reaccounted, 2u * kRounds - 3);
}

TEST_F(HistoryMigrationTest, AFileThatIsNotMemfleetsFailsAndWritesNothing) {
  const std::string garbage = dir_.path() + "/garbage.db";
  {
    std::FILE* f = std::fopen(garbage.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fputs("this is not an SQLite database, only text of some length to fill a page header........", f);
    std::fclose(f);
  }
  std::string log;
  EXPECT_EQ(Migrate({}, &log, garbage), 1) << log;
  EXPECT_NE(log.find("migrate: cannot open " + garbage + " read-only"), std::string::npos) << log;
  std::unique_ptr<storage::SqlStore> pg = OpenPostgres();
  ASSERT_NE(pg, nullptr);
  EXPECT_EQ(pg->GetStats().value().captures, 0u);
  EXPECT_TRUE(pg->ListDevices().value().empty());
}

}  // namespace
}  // namespace memfleet::server
