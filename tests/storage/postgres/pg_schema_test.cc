// The PostgreSQL schema (storage/postgres/pg_schema.h) on a real PostgreSQL: servers that start at once
// on one empty database migrate it exactly once, a database that is not memfleet's or is newer is
// refused, failures carry the server's own message, and a database an older memfleet wrote (version 3:
// text-keyed process rows, reports inline) moves in place to the shape the one store reads — every
// query then answers what version 3 stored.
#include "storage/postgres/pg_schema.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "storage/postgres/pg_connection.h"
#include "storage/postgres/pg_store.h"
#include "storage/report_codec.h"
#include "tests/support/postgres_server.h"

namespace memfleet::storage {
namespace {

std::unique_ptr<PgConnection> Connect(const std::string& uri) {
  absl::StatusOr<std::unique_ptr<PgConnection>> db = PgConnection::Connect(uri);
  EXPECT_TRUE(db.ok()) << db.status();
  return db.ok() ? *std::move(db) : nullptr;
}

int64_t CountOf(SqlConnection& db, const std::string& sql) {
  absl::StatusOr<std::optional<int64_t>> n = QueryFirst(db, sql, {}, [](const SqlRow& r) { return r.ColumnInt64(0); });
  EXPECT_TRUE(n.ok()) << n.status();
  return n.ok() && n->has_value() ? **n : -1;
}

TEST(PgSchemaTest, ServersStartingAtOnceMigrateAnEmptyDatabaseOnce) {
  const std::string uri = testing::NewPostgresDatabase();
  ASSERT_FALSE(uri.empty());
  constexpr int kServers = 6;
  std::atomic<int> opened{0};
  std::vector<std::thread> servers;
  for (int i = 0; i < kServers; ++i) {
    servers.emplace_back([&] {
      absl::StatusOr<std::unique_ptr<SqlStore>> store = OpenPgStore(uri);
      if (store.ok()) {
        ++opened;
      } else {
        ADD_FAILURE() << store.status();
      }
    });
  }
  for (std::thread& t : servers) t.join();
  EXPECT_EQ(opened.load(), kServers);
  std::unique_ptr<PgConnection> db = Connect(uri);
  ASSERT_NE(db, nullptr);
  absl::StatusOr<int> version = ReadPgSchemaVersion(*db);
  ASSERT_TRUE(version.ok()) << version.status();
  EXPECT_EQ(*version, LatestPgSchemaVersion());
  EXPECT_EQ(CountOf(*db, "SELECT COUNT(*) FROM schema_version"), 1);  // no second CREATE/INSERT slipped through
}

TEST(PgSchemaTest, ADatabaseWithOtherTablesIsNotMigrated) {
  const std::string uri = testing::NewPostgresDatabase();
  ASSERT_FALSE(uri.empty());
  ASSERT_TRUE(Connect(uri)->Exec("CREATE TABLE invoices (id BIGINT PRIMARY KEY)").ok());
  absl::StatusOr<std::unique_ptr<SqlStore>> store = OpenPgStore(uri);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition) << store.status();
  EXPECT_NE(store.status().message().find("not a memfleet database"), std::string::npos) << store.status();
}

TEST(PgSchemaTest, ANewerDatabaseIsRefused) {
  const std::string uri = testing::NewPostgresDatabase();
  ASSERT_FALSE(uri.empty());
  ASSERT_TRUE(OpenPgStore(uri).ok());
  ASSERT_TRUE(Connect(uri)->Exec("UPDATE schema_version SET version = version + 1").ok());
  absl::StatusOr<std::unique_ptr<SqlStore>> store = OpenPgStore(uri);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition) << store.status();
  EXPECT_NE(store.status().message().find("newer than this memfleet build"), std::string::npos) << store.status();
}

TEST(PgSchemaTest, ErrorsCarryTheServersMessage) {
  const std::string uri = testing::NewPostgresDatabase();
  ASSERT_FALSE(uri.empty());
  // A database that does not exist: the server says so, by name.
  const std::string missing = uri.substr(0, uri.rfind('/')) + "/no_such_db";
  absl::StatusOr<std::unique_ptr<SqlStore>> store = OpenPgStore(missing);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kUnavailable) << store.status();
  EXPECT_NE(store.status().message().find("\"no_such_db\" does not exist"), std::string::npos) << store.status();
  // A statement the server refuses: its message and SQLSTATE, and the statement's first words.
  std::unique_ptr<PgConnection> db = Connect(uri);
  ASSERT_NE(db, nullptr);
  absl::StatusOr<int64_t> bad = RunSql(*db, "SELECT * FROM no_such_table WHERE id = ?1", {SqlValue::Int(1)});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("relation \"no_such_table\" does not exist"), std::string::npos)
      << bad.status();
  EXPECT_NE(bad.status().message().find("[42P01]"), std::string::npos) << bad.status();
  EXPECT_NE(bad.status().message().find("SELECT * FROM no_such_table"), std::string::npos) << bad.status();
}

// ---- a version-3 database moved in place ----

void ExecOrDie(SqlConnection& db, const std::string& sql, SqlParams params = {}) {
  absl::StatusOr<int64_t> done = RunSql(db, sql, std::move(params));
  ASSERT_TRUE(done.ok()) << done.status() << " in " << sql.substr(0, 200);
}

struct Version3Process {
  int pid;
  std::string name;
  std::optional<int64_t> total_kb;
  std::optional<int64_t> pss_kb;
};

// A capture as PostgreSQL schema version 3 held it: the report inline in device_reports, one text-keyed
// process_reports row per process. `raw_base` "" for a whole capture.
void InsertVersion3Capture(SqlConnection& db, const std::string& device, const std::string& id, const std::string& at,
                           int64_t device_total_kb, const std::string& raw_base,
                           const std::vector<Version3Process>& processes) {
  ExecOrDie(db, "INSERT INTO devices (device_id, last_seen_at) VALUES (?1, ?2) ON CONFLICT (device_id) DO NOTHING",
            {SqlValue::Text(device), SqlValue::Text(at)});
  ExecOrDie(db,
            "INSERT INTO captures (capture_id, device_id, captured_at, raw_codec, raw_blob, raw_base) "
            "VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            {SqlValue::Text(id), SqlValue::Text(device), SqlValue::Text(at),
             SqlValue::Text(raw_base.empty() ? "zstd+proto" : "zstd-delta+proto"), SqlValue::Blob("raw " + id),
             SqlValue::TextOrNull(raw_base)});
  ExecOrDie(db,
            "INSERT INTO device_reports (capture_id, device_id, captured_at, platform, total_kb, report_zstd) "
            "VALUES (?1, ?2, ?3, 'qcom', ?4, ?5)",
            {SqlValue::Text(id), SqlValue::Text(device), SqlValue::Text(at), SqlValue::Int(device_total_kb),
             SqlValue::Blob(CompressReportJson("{\"capture\":\"" + id + "\"}"))});
  for (const Version3Process& p : processes) {
    ExecOrDie(db,
              "INSERT INTO process_reports (capture_id, device_id, captured_at, pid, name, oom_score_adj, cached, "
              "total_kb, pss_kb) VALUES (?1, ?2, ?3, ?4, ?5, 900, 1, ?6, ?7)",
              {SqlValue::Text(id), SqlValue::Text(device), SqlValue::Text(at), SqlValue::Int(p.pid),
               SqlValue::Text(p.name), SqlValue::OptionalInt(p.total_kb), SqlValue::OptionalInt(p.pss_kb)});
  }
}

std::vector<std::string> Points(const absl::StatusOr<std::vector<HistoryRow>>& rows) {
  EXPECT_TRUE(rows.ok()) << rows.status();
  std::vector<std::string> out;
  if (!rows.ok()) return out;
  for (const HistoryRow& row : *rows) {
    out.push_back(row.capture_id + "/" + std::to_string(row.pid) + "=" +
                  (row.value_kb.has_value() ? std::to_string(*row.value_kb) : "null"));
  }
  return out;
}

class PgVersion3MigrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    uri_ = testing::NewPostgresDatabase();
    ASSERT_FALSE(uri_.empty());
    std::unique_ptr<PgConnection> db = Connect(uri_);
    ASSERT_NE(db, nullptr);
    ASSERT_TRUE(MigratePgTo(*db, 3).ok());
    // dev-a: a keyframe and two deltas of it, the later two at one millisecond (the greater id the later),
    // a second surfaceflinger (pid 43) in one, an unknown figure, a name that means something to SQL.
    InsertVersion3Capture(*db, "dev-a", "dev-a-1", "2026-11-30T08:00:00.000Z", 9000, "",
                          {{42, "surfaceflinger", 700, 600}, {1000, "system_server", 5000, 4000}});
    InsertVersion3Capture(*db, "dev-a", "dev-a-2", "2026-11-30T08:10:00.250Z", 9100, "dev-a-1",
                          {{42, "surfaceflinger", 710, std::nullopt}, {43, "surfaceflinger", 20, 10}});
    InsertVersion3Capture(*db, "dev-a", "dev-a-3", "2026-11-30T08:10:00.250Z", 9200, "dev-a-1",
                          {{42, "surfaceflinger", 720, 620}, {7, "it's \"quoted\", {NULL}", 1, 1}});
    InsertVersion3Capture(*db, "dev-b", "dev-b-1", "2026-11-30T08:05:00.000Z", 8000, "",
                          {{42, "surfaceflinger", 900, 800}});
    ExecOrDie(*db, "INSERT INTO capture_labels (capture_id, key, value) VALUES ('dev-a-2', 'run', '7')");
    absl::StatusOr<std::unique_ptr<SqlStore>> store = OpenPgStore(uri_);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  std::string uri_;
  std::unique_ptr<SqlStore> store_;
};

TEST_F(PgVersion3MigrationTest, TheDatabaseIsAtTheLatestVersionWithoutTheOldTables) {
  std::unique_ptr<PgConnection> db = Connect(uri_);
  ASSERT_NE(db, nullptr);
  absl::StatusOr<int> version = ReadPgSchemaVersion(*db);
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(*version, LatestPgSchemaVersion());
  EXPECT_EQ(CountOf(*db, "SELECT COUNT(*) FROM pg_tables WHERE tablename IN ('process_reports', 'device_reports_v7')"),
            0);
  EXPECT_EQ(CountOf(*db, "SELECT COUNT(*) FROM process_names"), 3);
  // The compressed columns are stored out of line without pglz, and raw_base's key may wait for COMMIT.
  EXPECT_EQ(CountOf(*db,
                    "SELECT COUNT(*) FROM pg_attribute WHERE attrelid = 'captures'::regclass AND "
                    "attname = 'raw_blob' AND attstorage = 'e'"),
            1);
  EXPECT_EQ(
      CountOf(*db, "SELECT COUNT(*) FROM pg_constraint WHERE conname = 'captures_raw_base_fkey' AND condeferrable"), 1);
}

TEST_F(PgVersion3MigrationTest, TrendsFleetAndFiguresAnswerWhatVersion3Stored) {
  // Ordered by time, then capture id, then pid.
  EXPECT_EQ(Points(store_->ProcessHistory("dev-a", "surfaceflinger", "total_kb", "", 0)),
            (std::vector<std::string>{"dev-a-1/42=700", "dev-a-2/42=710", "dev-a-2/43=20", "dev-a-3/42=720"}));
  // A limit keeps the newest points.
  EXPECT_EQ(Points(store_->ProcessHistory("dev-a", "surfaceflinger", "pss_kb", "2026-11-30T08:10:00.250Z", 2)),
            (std::vector<std::string>{"dev-a-2/43=10", "dev-a-3/42=620"}));
  EXPECT_EQ(Points(store_->ProcessHistory("dev-a", "it's \"quoted\", {NULL}", "total_kb", "", 0)),
            (std::vector<std::string>{"dev-a-3/7=1"}));
  EXPECT_EQ(Points(store_->DeviceHistory("dev-a", "total_kb", "", 0)),
            (std::vector<std::string>{"dev-a-1/0=9000", "dev-a-2/0=9100", "dev-a-3/0=9200"}));
  absl::StatusOr<std::vector<FleetValueRow>> fleet = store_->LatestPerDevice("total_kb", "surfaceflinger");
  ASSERT_TRUE(fleet.ok()) << fleet.status();
  ASSERT_EQ(fleet->size(), 2u);
  EXPECT_EQ((*fleet)[0].capture_id, "dev-a-3");  // the tie on time goes to the greater id
  EXPECT_EQ((*fleet)[0].value_kb, 720);
  EXPECT_EQ((*fleet)[1].value_kb, 900);
  absl::StatusOr<std::optional<int64_t>> pss = store_->CaptureFigure("dev-a-1", "pss_kb", "system_server");
  ASSERT_TRUE(pss.ok()) << pss.status();
  EXPECT_EQ(*pss, 4000);
  absl::StatusOr<std::optional<StoredReport>> report = store_->GetReportByCapture("dev-a-2");
  ASSERT_TRUE(report.ok() && report->has_value()) << report.status();
  EXPECT_EQ((*report)->report_json, "{\"capture\":\"dev-a-2\"}");
  // No sweep asked for the capture: version 5 counts its label as its agent's.
  absl::StatusOr<LabelSet> labels = store_->CaptureLabels("dev-a-2");
  ASSERT_TRUE(labels.ok()) << labels.status();
  EXPECT_EQ(*labels, (LabelSet{{}, {{"run", "7"}}}));
  absl::StatusOr<Store::Stats> stats = store_->GetStats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->captures, 4u);
  EXPECT_EQ(stats->process_rows, 7u);
}

TEST_F(PgVersion3MigrationTest, MigratedCapturesAreDeletedReplacedAndBuiltOnAsNewOnes) {
  // A keyframe its deltas still need stays; the deltas go, then it may.
  EXPECT_EQ(store_->DeleteCaptures({"dev-a-1"}).status().code(), absl::StatusCode::kFailedPrecondition);
  absl::StatusOr<size_t> deleted = store_->DeleteCaptures({"dev-a-1", "dev-a-2", "dev-a-3"});
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, 3u);
  EXPECT_TRUE(Points(store_->ProcessHistory("dev-a", "surfaceflinger", "total_kb", "", 0)).empty());
  report::Report replacement;
  replacement.device_id = "dev-b";
  replacement.processes[42].pid = 42;
  replacement.processes[42].name = "surfaceflinger";
  replacement.processes[42].total_kb = 901;
  ASSERT_TRUE(store_->ReplaceReport("dev-b-1", replacement, "{\"replaced\":1}").ok());
  EXPECT_EQ(Points(store_->ProcessHistory("dev-b", "surfaceflinger", "total_kb", "", 0)),
            (std::vector<std::string>{"dev-b-1/42=901"}));
  // A new delta of the migrated keyframe: stored against its report, and read back.
  CaptureRecord delta;
  delta.capture_id = "dev-b-2";
  delta.device_id = "dev-b";
  delta.captured_at = "2026-11-30T08:15:00.000Z";
  delta.raw_codec = "zstd-delta+proto";
  delta.raw_blob = "delta";
  delta.raw_base = "dev-b-1";
  delta.report_json = "{\"replaced\":2}";
  absl::StatusOr<bool> put = store_->PutCapture(delta);
  ASSERT_TRUE(put.ok() && *put) << put.status();
  absl::StatusOr<std::optional<StoredReport>> report = store_->GetReportByCapture("dev-b-2");
  ASSERT_TRUE(report.ok() && report->has_value()) << report.status();
  EXPECT_EQ((*report)->report_json, "{\"replaced\":2}");
  std::unique_ptr<PgConnection> db = Connect(uri_);
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(CountOf(*db,
                    "SELECT COUNT(*) FROM report_blobs b JOIN device_reports r USING (capture_no) "
                    "WHERE r.capture_id = 'dev-b-2' AND b.base_no IS NOT NULL"),
            1);
}

}  // namespace
}  // namespace memfleet::storage
