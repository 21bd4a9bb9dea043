// Schema version 15 (storage/sqlite/schema.cc): the process rows move from process_reports (text ids, a covering
// trend index, a (capture_id, pid) key) into process_samples (integer numbers, clustered on the trend's
// order). A database written at version 14 migrates, and every query that reads process rows answers what
// was stored at 14: the values below are the ones inserted, in the order the queries promise.
// Schema version 16 ends the (device, time) indexes at captured_at: a version-15 file whose ties on time
// were stored in the other order than their ids still answers in id order. Schema version 19 packs each
// capture's process rows into one block of its report row: the same answers again, from a version-14 file
// migrated through 15 to 19 (17 and 18, label sources and retired_at, in between).
#include <sqlite3.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "report/report.h"
#include "storage/report_codec.h"
#include "storage/sqlite/migration_functions.h"
#include "storage/sqlite/schema.h"
#include "storage/sqlite/sqlite_db.h"
#include "storage/sqlite/sqlite_store.h"
#include "tests/support/temp_dir.h"

namespace memfleet::storage {
namespace {

void ExecOrDie(SqliteDb& db, const std::string& sql) {
  absl::Status s = db.Exec(sql);
  ASSERT_TRUE(s.ok()) << s << " in " << sql.substr(0, 200);
}

// A capture as the store wrote it at version 14: the report compressed in device_reports, the process
// rows in process_reports. `processes`: pid, name, total_kb, pss_kb.
struct Version14Process {
  int pid;
  std::string name;
  std::optional<int64_t> total_kb;
  std::optional<int64_t> pss_kb;
};

void InsertVersion14Capture(SqliteDb& db, const std::string& device, const std::string& id, const std::string& at,
                            int64_t device_total_kb, const std::vector<Version14Process>& processes) {
  ExecOrDie(db, "INSERT INTO devices (device_id, last_seen_at) VALUES ('" + device + "', '" + at +
                    "') ON CONFLICT (device_id) DO NOTHING");
  ExecOrDie(db, "INSERT INTO captures (capture_id, device_id, captured_at, raw_codec, raw_blob) VALUES ('" + id +
                    "', '" + device + "', '" + at + "', 'zstd+proto', x'00')");
  absl::StatusOr<Statement> report = db.Prepare(
      "INSERT INTO device_reports (capture_id, device_id, captured_at, platform, total_kb, report_zstd) "
      "VALUES (?1, ?2, ?3, 'qcom', ?4, ?5)");
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_TRUE(report->BindText(1, id).ok());
  ASSERT_TRUE(report->BindText(2, device).ok());
  ASSERT_TRUE(report->BindText(3, at).ok());
  ASSERT_TRUE(report->BindInt64(4, device_total_kb).ok());
  ASSERT_TRUE(report->BindBlob(5, CompressReportJson("{\"capture\":\"" + id + "\"}")).ok());
  ASSERT_TRUE(report->StepDone().ok());
  absl::StatusOr<Statement> process = db.Prepare(
      "INSERT INTO process_reports (capture_id, device_id, captured_at, pid, name, oom_score_adj, cached, total_kb, "
      "pss_kb) VALUES (?1, ?2, ?3, ?4, ?5, 900, 1, ?6, ?7)");
  ASSERT_TRUE(process.ok()) << process.status();
  for (const Version14Process& p : processes) {
    process->Reset();
    ASSERT_TRUE(process->BindText(1, id).ok());
    ASSERT_TRUE(process->BindText(2, device).ok());
    ASSERT_TRUE(process->BindText(3, at).ok());
    ASSERT_TRUE(process->BindInt64(4, p.pid).ok());
    ASSERT_TRUE(process->BindText(5, p.name).ok());
    ASSERT_TRUE(process->BindOptionalInt64(6, p.total_kb).ok());
    ASSERT_TRUE(process->BindOptionalInt64(7, p.pss_kb).ok());
    ASSERT_TRUE(process->StepDone().ok());
  }
}

// capture_id/pid/value of each point, for one EXPECT_EQ per trend.
std::vector<std::string> Points(const absl::StatusOr<std::vector<HistoryRow>>& rows) {
  EXPECT_TRUE(rows.ok()) << rows.status();
  std::vector<std::string> out;
  if (!rows.ok()) return out;
  for (const HistoryRow& row : *rows) {
    out.push_back(row.capture_id + "@" + row.captured_at + "/" + std::to_string(row.pid) + "=" +
                  (row.value_kb.has_value() ? std::to_string(*row.value_kb) : "null"));
  }
  return out;
}

// A file at schema `version` (14 or later): written at 14 by `fill`, then migrated by the later migrations
// alone, as a server of that version left it; then opened by the store, which migrates it to the latest.
std::unique_ptr<SqlStore> OpenOldFile(const std::string& path, int version,
                                      const std::function<void(SqliteDb&)>& fill) {
  {
    absl::StatusOr<SqliteDb> db = SqliteDb::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    EXPECT_TRUE(db.ok()) << db.status();
    if (!db.ok()) return nullptr;
    EXPECT_TRUE(RegisterMigrationFunctions(*db).ok());  // migration 14 names the function
    ExecOrDie(*db,
              "CREATE TABLE schema_version (version INTEGER NOT NULL) STRICT; INSERT INTO schema_version VALUES (" +
                  std::to_string(version) + ")");
    for (int v = 0; v < 14; ++v) ExecOrDie(*db, Migrations()[static_cast<size_t>(v)]);
    fill(*db);
    for (int v = 14; v < version; ++v) ExecOrDie(*db, Migrations()[static_cast<size_t>(v)]);
  }
  absl::StatusOr<std::unique_ptr<SqlStore>> store = OpenSqliteStore(path);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? *std::move(store) : nullptr;
}

class ProcessSamplesMigrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    store_ = OpenOldFile(dir_.path() + "/memfleet.db", 14, [](SqliteDb& db) {
      // dev-a: two captures at the same millisecond (the greater id is the later), a second surfaceflinger
      // (pid 43) in one of them, an unknown figure.
      InsertVersion14Capture(db, "dev-a", "dev-a-1", "2026-11-30T08:00:00.000Z", 9000,
                             {{42, "surfaceflinger", 700, 600}, {1000, "system_server", 5000, 4000}});
      InsertVersion14Capture(db, "dev-a", "dev-a-2", "2026-11-30T08:10:00.250Z", 9100,
                             {{42, "surfaceflinger", 710, std::nullopt}, {43, "surfaceflinger", 20, 10}});
      InsertVersion14Capture(db, "dev-a", "dev-a-3", "2026-11-30T08:10:00.250Z", 9200,
                             {{42, "surfaceflinger", 720, 620}});
      InsertVersion14Capture(db, "dev-b", "dev-b-1", "2026-11-30T08:05:00.000Z", 8000,
                             {{42, "surfaceflinger", 900, 800}});
    });
    ASSERT_NE(store_, nullptr);
  }

  testing::TempDir dir_{"memfleet-samples-migration"};
  std::unique_ptr<SqlStore> store_;
};

TEST_F(ProcessSamplesMigrationTest, TrendsAnswerWhatVersion14Stored) {
  // Ordered by time, then capture id (at one time the lower id first), then pid: a capture's points together.
  EXPECT_EQ(
      Points(store_->ProcessHistory("dev-a", "surfaceflinger", "total_kb", "", 0)),
      (std::vector<std::string>{"dev-a-1@2026-11-30T08:00:00.000Z/42=700", "dev-a-2@2026-11-30T08:10:00.250Z/42=710",
                                "dev-a-2@2026-11-30T08:10:00.250Z/43=20", "dev-a-3@2026-11-30T08:10:00.250Z/42=720"}));
  // A limit keeps the newest two, in the same order.
  EXPECT_EQ(
      Points(store_->ProcessHistory("dev-a", "surfaceflinger", "pss_kb", "2026-11-30T08:10:00.250Z", 2)),
      (std::vector<std::string>{"dev-a-2@2026-11-30T08:10:00.250Z/43=10", "dev-a-3@2026-11-30T08:10:00.250Z/42=620"}));
  // `since` one millisecond later excludes the 08:10:00.250 captures.
  EXPECT_TRUE(
      Points(store_->ProcessHistory("dev-a", "surfaceflinger", "total_kb", "2026-11-30T08:10:00.251Z", 0)).empty());
  EXPECT_EQ(Points(store_->ProcessHistory("dev-b", "surfaceflinger", "total_kb", "", 0)),
            (std::vector<std::string>{"dev-b-1@2026-11-30T08:05:00.000Z/42=900"}));
  EXPECT_TRUE(Points(store_->ProcessHistory("dev-b", "system_server", "total_kb", "", 0)).empty());
  EXPECT_TRUE(Points(store_->ProcessHistory("dev-z", "surfaceflinger", "total_kb", "", 0)).empty());
  EXPECT_EQ(
      Points(store_->DeviceHistory("dev-a", "total_kb", "", 0)),
      (std::vector<std::string>{"dev-a-1@2026-11-30T08:00:00.000Z/0=9000", "dev-a-2@2026-11-30T08:10:00.250Z/0=9100",
                                "dev-a-3@2026-11-30T08:10:00.250Z/0=9200"}));
}

TEST_F(ProcessSamplesMigrationTest, FleetAndCaptureFiguresAnswerWhatVersion14Stored) {
  absl::StatusOr<std::vector<FleetValueRow>> fleet = store_->LatestPerDevice("total_kb", "surfaceflinger");
  ASSERT_TRUE(fleet.ok()) << fleet.status();
  ASSERT_EQ(fleet->size(), 2u);
  EXPECT_EQ((*fleet)[0].capture_id, "dev-a-3");  // the tie on time goes to the greater id
  EXPECT_EQ((*fleet)[0].value_kb, 720);
  EXPECT_EQ((*fleet)[1].value_kb, 900);
  absl::StatusOr<std::vector<FleetValueRow>> absent = store_->LatestPerDevice("total_kb", "system_server");
  ASSERT_TRUE(absent.ok()) << absent.status();
  ASSERT_EQ(absent->size(), 2u);
  EXPECT_EQ((*absent)[0].value_kb, std::nullopt);  // not in dev-a's latest capture

  // Two surfaceflinger pids in dev-a-2 (710 and 20 kB) count together, as the baseline check sums them.
  absl::StatusOr<std::optional<int64_t>> both_pids = store_->CaptureFigure("dev-a-2", "total_kb", "surfaceflinger");
  ASSERT_TRUE(both_pids.ok()) << both_pids.status();
  EXPECT_EQ(*both_pids, 730);
  // One of them unknown: the sum is unknown, never an undercount.
  absl::StatusOr<std::optional<int64_t>> one_unknown = store_->CaptureFigure("dev-a-2", "pss_kb", "surfaceflinger");
  ASSERT_TRUE(one_unknown.ok()) << one_unknown.status();
  EXPECT_EQ(*one_unknown, std::nullopt);
  absl::StatusOr<std::optional<int64_t>> pss = store_->CaptureFigure("dev-a-1", "pss_kb", "system_server");
  ASSERT_TRUE(pss.ok()) << pss.status();
  EXPECT_EQ(*pss, 4000);
  absl::StatusOr<std::optional<StoredReport>> report = store_->GetReportByCapture("dev-a-2");
  ASSERT_TRUE(report.ok() && report->has_value()) << report.status();
  EXPECT_EQ((*report)->report_json, "{\"capture\":\"dev-a-2\"}");
  absl::StatusOr<Store::Stats> stats = store_->GetStats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->process_rows, 6u);
}

TEST_F(ProcessSamplesMigrationTest, MigratedRowsGoWithTheirCaptureAndAreReplacedWithTheirReport) {
  absl::StatusOr<size_t> deleted = store_->DeleteCaptures({"dev-a-1"});
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, 1u);
  report::Report replacement;
  replacement.device_id = "dev-a";
  replacement.processes[42].pid = 42;
  replacement.processes[42].name = "surfaceflinger";
  replacement.processes[42].total_kb = 711;
  ASSERT_TRUE(store_->ReplaceReport("dev-a-2", replacement, "{}").ok());
  EXPECT_EQ(
      Points(store_->ProcessHistory("dev-a", "surfaceflinger", "total_kb", "", 0)),
      (std::vector<std::string>{"dev-a-2@2026-11-30T08:10:00.250Z/42=711", "dev-a-3@2026-11-30T08:10:00.250Z/42=720"}));
  EXPECT_TRUE(Points(store_->ProcessHistory("dev-a", "system_server", "total_kb", "", 0)).empty());
  absl::StatusOr<Store::Stats> stats = store_->GetStats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->process_rows, 3u);  // dev-a-2's pid 43 went with its old report
}

// A file at version 15 where, at one time, the greater capture id was stored first (so the captures'
// rowids, the last column of every index entry, disagree with the id order that breaks ties), and two
// builds.
class Version15TiesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    store_ = OpenOldFile(dir_.path() + "/memfleet.db", 15, [](SqliteDb& db) {
      InsertVersion14Capture(db, "dev-a", "dev-a-1", "2026-11-30T08:00:00.000Z", 9000,
                             {{42, "surfaceflinger", 700, 600}});
      InsertVersion14Capture(db, "dev-a", "dev-a-9", "2026-11-30T08:10:00.250Z", 9900,
                             {{42, "surfaceflinger", 790, 690}});
      InsertVersion14Capture(db, "dev-a", "dev-a-5", "2026-11-30T08:10:00.250Z", 9500,
                             {{42, "surfaceflinger", 750, 650}});
      ExecOrDie(db, "UPDATE captures SET build_fingerprint = CASE capture_id WHEN 'dev-a-1' THEN 'old' ELSE 'new' END");
    });
    ASSERT_NE(store_, nullptr);
  }

  testing::TempDir dir_{"memfleet-v15-ties"};
  std::unique_ptr<SqlStore> store_;
};

TEST_F(Version15TiesTest, TiesOnTimeStillGoToTheCaptureIdOrder) {
  EXPECT_EQ(
      Points(store_->DeviceHistory("dev-a", "total_kb", "", 0)),
      (std::vector<std::string>{"dev-a-1@2026-11-30T08:00:00.000Z/0=9000", "dev-a-5@2026-11-30T08:10:00.250Z/0=9500",
                                "dev-a-9@2026-11-30T08:10:00.250Z/0=9900"}));
  EXPECT_EQ(
      Points(store_->DeviceHistory("dev-a", "total_kb", "", 2)),  // the newest two
      (std::vector<std::string>{"dev-a-5@2026-11-30T08:10:00.250Z/0=9500", "dev-a-9@2026-11-30T08:10:00.250Z/0=9900"}));
  absl::StatusOr<std::vector<FleetValueRow>> fleet = store_->LatestPerDevice("total_kb", "");
  ASSERT_TRUE(fleet.ok()) << fleet.status();
  ASSERT_EQ(fleet->size(), 1u);
  EXPECT_EQ((*fleet)[0].capture_id, "dev-a-9");
  EXPECT_EQ((*fleet)[0].value_kb, 9900);
  absl::StatusOr<std::vector<FleetValueRow>> process = store_->LatestPerDevice("total_kb", "surfaceflinger");
  ASSERT_TRUE(process.ok()) << process.status();
  ASSERT_EQ(process->size(), 1u);
  EXPECT_EQ((*process)[0].value_kb, 790);

  absl::StatusOr<std::optional<StoredReport>> latest = store_->GetReport("dev-a", "");
  ASSERT_TRUE(latest.ok() && latest->has_value()) << latest.status();
  EXPECT_EQ((*latest)->report_json, "{\"capture\":\"dev-a-9\"}");
  absl::StatusOr<std::optional<StoredReport>> at = store_->GetReport("dev-a", "2026-11-30T08:10:00.250Z");
  ASSERT_TRUE(at.ok() && at->has_value()) << at.status();
  EXPECT_EQ((*at)->capture_id, "dev-a-9");
  absl::StatusOr<std::optional<StoredReport>> before = store_->GetReport("dev-a", "2026-11-30T08:10:00.249Z");
  ASSERT_TRUE(before.ok() && before->has_value()) << before.status();
  EXPECT_EQ((*before)->capture_id, "dev-a-1");

  absl::StatusOr<std::vector<StoredReport>> since = store_->LatestReportsSince("");
  ASSERT_TRUE(since.ok()) << since.status();
  ASSERT_EQ(since->size(), 1u);
  EXPECT_EQ((*since)[0].capture_id, "dev-a-9");
  absl::StatusOr<std::vector<StoredReport>> per_build = store_->LatestReportsPerBuild("");
  ASSERT_TRUE(per_build.ok()) << per_build.status();
  ASSERT_EQ(per_build->size(), 2u);
  EXPECT_EQ((*per_build)[0].build_fingerprint, "new");
  EXPECT_EQ((*per_build)[0].capture_id, "dev-a-9");
  EXPECT_EQ((*per_build)[1].build_fingerprint, "old");
  EXPECT_EQ((*per_build)[1].capture_id, "dev-a-1");
  absl::StatusOr<std::vector<DeviceSummaryRow>> devices = store_->ListDevices();
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_EQ((*devices)[0].last_total_kb, 9900);
}

}  // namespace
}  // namespace memfleet::storage
