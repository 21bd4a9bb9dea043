#include "storage/sqlite/schema.h"

#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "storage/sqlite/sqlite_db.h"
#include "storage/sqlite/sqlite_store.h"
#include "tests/support/temp_dir.h"

namespace memfleet::storage {
namespace {

using memfleet::testing::TempDir;

constexpr int kCreate = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;

// The version-1 schema exactly as it shipped, written out here rather than taken from Migrations()[0]:
// a database made by the first release must keep upgrading even if someone edits migration 1 by
// mistake (which this test would then catch as a mismatch in the upgraded schema).
constexpr char kVersion1Database[] = R"sql(
CREATE TABLE schema_version (version INTEGER NOT NULL) STRICT;
INSERT INTO schema_version (version) VALUES (1);
CREATE TABLE devices (
  device_id TEXT PRIMARY KEY NOT NULL, model TEXT NOT NULL DEFAULT '', soc TEXT NOT NULL DEFAULT '',
  build_fingerprint TEXT NOT NULL DEFAULT '', kernel TEXT NOT NULL DEFAULT '',
  agent_version TEXT NOT NULL DEFAULT '', page_size INTEGER NOT NULL DEFAULT 0,
  platform TEXT NOT NULL DEFAULT '', last_seen_at TEXT NOT NULL DEFAULT '') STRICT;
CREATE TABLE captures (
  capture_id TEXT PRIMARY KEY NOT NULL, device_id TEXT NOT NULL, captured_at TEXT NOT NULL,
  received_at TEXT NOT NULL DEFAULT '', sweep_id TEXT NOT NULL DEFAULT '', raw_codec TEXT NOT NULL DEFAULT '',
  raw_bytes INTEGER NOT NULL DEFAULT 0, report_json TEXT NOT NULL DEFAULT '', raw_blob BLOB NOT NULL) STRICT;
CREATE TABLE device_reports (
  capture_id TEXT PRIMARY KEY NOT NULL REFERENCES captures (capture_id) ON DELETE CASCADE,
  device_id TEXT NOT NULL, captured_at TEXT NOT NULL, platform TEXT NOT NULL, ddr_kb INTEGER,
  ddr_estimated INTEGER NOT NULL DEFAULT 0, mem_total_kb INTEGER, gcma_kb INTEGER, static_reserved_kb INTEGER,
  kernel_cma_kb INTEGER, kernel_kb INTEGER, processes_kb INTEGER, total_kb INTEGER) STRICT;
CREATE TABLE process_reports (
  capture_id TEXT NOT NULL REFERENCES captures (capture_id) ON DELETE CASCADE, device_id TEXT NOT NULL,
  captured_at TEXT NOT NULL, pid INTEGER NOT NULL, name TEXT NOT NULL, oom_score_adj INTEGER,
  cached INTEGER NOT NULL DEFAULT 0, pss_kb INTEGER, swap_pss_kb INTEGER, gfxdev_kb INTEGER, gl_kb INTEGER,
  dma_kb INTEGER, native_graphics_kb INTEGER, native_graphics_source TEXT NOT NULL DEFAULT 'none',
  non_graphics_kb INTEGER, graphics_dma_kb INTEGER, total_kb INTEGER, PRIMARY KEY (capture_id, pid)) STRICT;
INSERT INTO devices (device_id, model, platform) VALUES ('dev-1', 'Pixel 8', 'generic');
INSERT INTO captures (capture_id, device_id, captured_at, report_json, raw_blob)
  VALUES ('cap-old', 'dev-1', '2023-06-01T08:00:00Z', '{"v1":true}', x'00ff');
INSERT INTO device_reports (capture_id, device_id, captured_at, platform, total_kb)
  VALUES ('cap-old', 'dev-1', '2023-06-01T08:00:00Z', 'generic', 123456);
INSERT INTO process_reports (capture_id, device_id, captured_at, pid, name, total_kb)
  VALUES ('cap-old', 'dev-1', '2023-06-01T08:00:00Z', 42, 'system_server', 2048);
)sql";

SqliteDb OpenOrDie(const std::string& path) {
  absl::StatusOr<SqliteDb> db = SqliteDb::Open(path, kCreate);
  EXPECT_TRUE(db.ok()) << db.status();
  return db.ok() ? std::move(*db) : SqliteDb();
}

int64_t QueryInt(SqliteDb& db, const std::string& sql) {
  absl::StatusOr<Statement> st = db.Prepare(sql);
  EXPECT_TRUE(st.ok()) << st.status();
  if (!st.ok()) return -1;
  absl::StatusOr<StepResult> r = st->Step();
  EXPECT_TRUE(r.ok() && *r == StepResult::kRow) << sql;
  return r.ok() && *r == StepResult::kRow ? st->ColumnInt64(0) : -1;
}

bool HasObject(SqliteDb& db, const std::string& type, const std::string& name) {
  absl::StatusOr<Statement> st = db.Prepare("SELECT 1 FROM sqlite_schema WHERE type = ?1 AND name = ?2");
  EXPECT_TRUE(st.ok());
  if (!st.ok()) return false;
  EXPECT_TRUE(st->BindText(1, type).ok());
  EXPECT_TRUE(st->BindText(2, name).ok());
  absl::StatusOr<StepResult> r = st->Step();
  return r.ok() && *r == StepResult::kRow;
}

void ExpectLatestSchema(SqliteDb& db) {
  absl::StatusOr<int> v = ReadSchemaVersion(db);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, LatestSchemaVersion());
  for (const char* table : {"schema_version", "devices", "captures", "device_reports", "process_names", "report_blobs",
                            "sweeps", "sweep_devices"}) {
    EXPECT_TRUE(HasObject(db, "table", table)) << table;
  }
  for (const char* index : {kDeviceReportsLatestIndex, kCapturesLatestIndex}) {
    EXPECT_TRUE(HasObject(db, "index", index)) << index;
  }
  EXPECT_FALSE(HasObject(db, "index", "process_samples_by_capture"));  // gone at version 16
  // Gone at version 19: a capture's process figures are a block in its report row.
  for (const char* table : {"process_samples", "device_process_names", "device_numbers"}) {
    EXPECT_FALSE(HasObject(db, "table", table)) << table;
  }
}

class SchemaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    path_ = dir_.path() + "/memfleet.db";
  }
  TempDir dir_;
  std::string path_;
};

TEST_F(SchemaTest, NewDatabaseGetsLatestSchema) {
  SqliteDb db = OpenOrDie(path_);
  absl::StatusOr<int> before = ReadSchemaVersion(db);
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(*before, 0);
  ASSERT_TRUE(MigrateToLatest(db).ok());
  ExpectLatestSchema(db);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM schema_version"), 1);
  EXPECT_TRUE(CheckSchemaIsLatest(db).ok());
}

TEST_F(SchemaTest, MigratingTwiceChangesNothing) {
  SqliteDb db = OpenOrDie(path_);
  ASSERT_TRUE(MigrateToLatest(db).ok());
  ASSERT_TRUE(db.Exec("INSERT INTO devices (device_id) VALUES ('d')").ok());
  ASSERT_TRUE(MigrateToLatest(db).ok());
  ExpectLatestSchema(db);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM devices"), 1);
}

TEST_F(SchemaTest, HandMadeVersion1DatabaseIsUpgradedKeepingItsData) {
  {
    SqliteDb db = OpenOrDie(path_);
    ASSERT_TRUE(db.Exec(kVersion1Database).ok());
    absl::StatusOr<int> v = ReadSchemaVersion(db);
    ASSERT_TRUE(v.ok());
    ASSERT_EQ(*v, 1);
    EXPECT_FALSE(HasObject(db, "table", "sweeps"));
    EXPECT_EQ(CheckSchemaIsLatest(db).code(), absl::StatusCode::kFailedPrecondition);
  }
  // Opening through the store is what a server restart after an upgrade does.
  absl::StatusOr<std::unique_ptr<Store>> store = OpenSqliteStore(path_);
  ASSERT_TRUE(store.ok()) << store.status();
  absl::StatusOr<std::optional<StoredReport>> report = (*store)->GetReport("dev-1", "");
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_TRUE(report->has_value());
  EXPECT_EQ((*report)->capture_id, "cap-old");
  EXPECT_EQ((*report)->report_json, "{\"v1\":true}");
  absl::StatusOr<std::vector<HistoryRow>> history =
      (*store)->ProcessHistory("dev-1", "system_server", "total_kb", "", 0);
  ASSERT_TRUE(history.ok()) << history.status();
  ASSERT_EQ(history->size(), 1u);
  EXPECT_EQ((*history)[0].value_kb, 2048);
  // Tables of version 2 work.
  SweepRecord sweep;
  sweep.sweep_id = "s1";
  sweep.states["dev-1"] = "sent";
  EXPECT_TRUE((*store)->PutSweep(sweep).ok());
  // Version 8: a capture stored before it has no build of its own (NULL), listed with build "".
  absl::StatusOr<std::vector<StoredReport>> per_build = (*store)->LatestReportsPerBuild("");
  ASSERT_TRUE(per_build.ok()) << per_build.status();
  ASSERT_EQ(per_build->size(), 1u);
  EXPECT_EQ((*per_build)[0].capture_id, "cap-old");
  EXPECT_EQ((*per_build)[0].build_fingerprint, "");
  // Version 10: a device recorded before it has no known clock skew until its next Hello.
  absl::StatusOr<std::optional<DeviceRecord>> device = (*store)->GetDevice("dev-1");
  ASSERT_TRUE(device.ok() && device->has_value()) << device.status();
  EXPECT_EQ((*device)->model, "Pixel 8");
  EXPECT_EQ((*device)->clock_skew_s, std::nullopt);
  store->reset();

  SqliteDb db = OpenOrDie(path_);
  ExpectLatestSchema(db);
  EXPECT_EQ(QueryInt(db, "SELECT total_kb FROM device_reports WHERE capture_id = 'cap-old'"), 123456);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM captures WHERE capture_id = 'cap-old' AND build_fingerprint IS NULL"),
            1);
}

TEST_F(SchemaTest, WholeSecondTimesOfAnOldDatabaseOrderWithMillisecondOnes) {
  {
    SqliteDb db = OpenOrDie(path_);
    ASSERT_TRUE(db.Exec(kVersion1Database).ok());
  }
  absl::StatusOr<std::unique_ptr<Store>> store = OpenSqliteStore(path_);
  ASSERT_TRUE(store.ok()) << store.status();
  // Version 12 rewrote cap-old's 08:00:00Z as 08:00:00.000Z: a capture half a second later in the same
  // second is newer. As text, "08:00:00Z" would have sorted after "08:00:00.500Z".
  CaptureRecord later;
  later.capture_id = "cap-new";
  later.device_id = "dev-1";
  later.captured_at = "2023-06-01T08:00:00.500Z";
  later.raw_codec = "gzip+proto";
  later.raw_blob = "x";
  later.report.device_id = "dev-1";
  later.report.captured_at = later.captured_at;
  later.report.processes[42].pid = 42;
  later.report.processes[42].name = "system_server";
  later.report.processes[42].total_kb = 4096;
  later.report_json = "{}";
  ASSERT_TRUE((*store)->PutCapture(later).ok());

  absl::StatusOr<std::optional<StoredReport>> latest = (*store)->GetReport("dev-1", "");
  ASSERT_TRUE(latest.ok() && latest->has_value()) << latest.status();
  EXPECT_EQ((*latest)->capture_id, "cap-new");
  EXPECT_EQ((*latest)->captured_at, "2023-06-01T08:00:00.500Z");
  // At the whole second (as a user types it), the old capture is the one that existed then.
  absl::StatusOr<std::optional<StoredReport>> at = (*store)->GetReport("dev-1", "2023-06-01T08:00:00Z");
  ASSERT_TRUE(at.ok() && at->has_value()) << at.status();
  EXPECT_EQ((*at)->capture_id, "cap-old");
  EXPECT_EQ((*at)->captured_at, "2023-06-01T08:00:00.000Z");
  absl::StatusOr<std::vector<HistoryRow>> history =
      (*store)->ProcessHistory("dev-1", "system_server", "total_kb", "2023-06-01T08:00:00Z", 0);
  ASSERT_TRUE(history.ok()) << history.status();
  ASSERT_EQ(history->size(), 2u);
  EXPECT_EQ((*history)[0].value_kb, 2048);  // cap-old first
  EXPECT_EQ((*history)[1].value_kb, 4096);
}

TEST_F(SchemaTest, DatabaseNewerThanCodeIsFailedPreconditionAndUntouched) {
  {
    SqliteDb db = OpenOrDie(path_);
    ASSERT_TRUE(MigrateToLatest(db).ok());
    ASSERT_TRUE(db.Exec("UPDATE schema_version SET version = 99").ok());
    absl::Status s = MigrateToLatest(db);
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_NE(s.message().find("99"), std::string::npos) << s;
    EXPECT_NE(s.message().find("newer"), std::string::npos) << s;
  }
  absl::StatusOr<std::unique_ptr<Store>> store = OpenSqliteStore(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition) << store.status();
  SqliteDb db = OpenOrDie(path_);
  EXPECT_EQ(QueryInt(db, "SELECT version FROM schema_version"), 99);
}

TEST_F(SchemaTest, FailedMigrationLeavesThePreviousVersionWhole) {
  SqliteDb db = OpenOrDie(path_);
  ASSERT_TRUE(db.Exec(kVersion1Database).ok());
  // A stray sweep_devices makes migration 2 fail on its second statement, after `sweeps` was created:
  // only a transactional migration leaves no `sweeps` behind.
  ASSERT_TRUE(db.Exec("CREATE TABLE sweep_devices (x)").ok());
  absl::Status s = MigrateToLatest(db);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("schema version 2"), std::string::npos) << s;
  EXPECT_NE(s.message().find("sweep_devices"), std::string::npos) << s;
  absl::StatusOr<int> v = ReadSchemaVersion(db);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 1);
  EXPECT_FALSE(HasObject(db, "table", "sweeps"));
  EXPECT_FALSE(db.InTransaction());
}

TEST_F(SchemaTest, ForeignDatabaseIsRefused) {
  SqliteDb db = OpenOrDie(path_);
  ASSERT_TRUE(db.Exec("CREATE TABLE devices (id INTEGER)").ok());
  absl::Status s = MigrateToLatest(db);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("not a memfleet database"), std::string::npos) << s;
}

TEST_F(SchemaTest, EmptyVersionTableIsDataLoss) {
  SqliteDb db = OpenOrDie(path_);
  ASSERT_TRUE(db.Exec("CREATE TABLE schema_version (version INTEGER NOT NULL)").ok());
  EXPECT_EQ(ReadSchemaVersion(db).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(MigrateToLatest(db).code(), absl::StatusCode::kDataLoss);
}

TEST(SchemaListTest, EveryMigrationIsNonEmptyAndVersionMatches) {
  ASSERT_GE(LatestSchemaVersion(), 3);
  EXPECT_EQ(static_cast<size_t>(LatestSchemaVersion()), Migrations().size());
  for (const std::string& m : Migrations()) EXPECT_FALSE(m.empty());
}

}  // namespace
}  // namespace memfleet::storage
