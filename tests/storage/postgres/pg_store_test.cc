// What only the store on PostgreSQL has to get right, on a real PostgreSQL (tests/support/postgres_server.h):
// several servers on one database (each its own store) storing the same captures at once store each once
// and tell exactly one of them it is new, and a store whose connections the server dropped works again at
// its next call; a batch of captures costs the same two round trips however many it holds, and a delta's
// report is stored against its keyframe's. Everything the two backends
// share is in the suites run on both (store_backends.h).
#include "storage/postgres/pg_store.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "report/report_json.h"
#include "storage/postgres/pg_connection.h"
#include "storage/postgres/pg_schema.h"
#include "storage/sql_connection_pool.h"
#include "tests/support/postgres_server.h"

namespace memfleet::storage {
namespace {

CaptureRecord MakeCapture(const std::string& capture_id, const std::string& device_id, int minute) {
  CaptureRecord c;
  c.capture_id = capture_id;
  c.device_id = device_id;
  c.captured_at = "2026-12-01T10:" + std::string(minute < 10 ? "0" : "") + std::to_string(minute) + ":00Z";
  c.raw_codec = "zstd+proto";
  c.raw_blob = std::string("\0\xff raw ", 7) + capture_id;  // bytes a text column would mangle
  c.report.device_id = device_id;
  c.report_json = "{\"capture\":\"" + capture_id + "\"}";
  return c;
}

std::unique_ptr<SqlStore> Open(const std::string& uri) {
  absl::StatusOr<std::unique_ptr<SqlStore>> store = OpenPgStore(uri);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? *std::move(store) : nullptr;
}

TEST(PgStoreTest, ServersStoringTheSameCapturesAtOnceStoreEachOnceAndSayNewOnce) {
  const std::string uri = testing::NewPostgresDatabase();
  ASSERT_FALSE(uri.empty());
  constexpr int kServers = 3, kCaptures = 30;
  std::vector<std::unique_ptr<SqlStore>> servers;
  for (int i = 0; i < kServers; ++i) {
    servers.push_back(Open(uri));
    ASSERT_NE(servers.back(), nullptr);
  }
  std::vector<std::vector<int>> answers(kServers, std::vector<int>(kCaptures, -1));  // 1 new, 0 duplicate, 2 error
  std::vector<std::thread> threads;
  for (int s = 0; s < kServers; ++s) {
    threads.emplace_back([&, s] {
      for (int k = 0; k < kCaptures; ++k) {
        const int id = (k + s * 11) % kCaptures;  // each server in another order
        absl::StatusOr<bool> r =
            servers[static_cast<size_t>(s)]->PutCapture(MakeCapture("cap-" + std::to_string(id), "dev-1", id));
        answers[static_cast<size_t>(s)][static_cast<size_t>(id)] = r.ok() ? (*r ? 1 : 0) : 2;
        if (!r.ok()) ADD_FAILURE() << r.status();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int id = 0; id < kCaptures; ++id) {
    int news = 0;
    for (int s = 0; s < kServers; ++s) news += answers[static_cast<size_t>(s)][static_cast<size_t>(id)] == 1;
    EXPECT_EQ(news, 1) << "cap-" << id;
  }
  absl::StatusOr<Store::Stats> stats = servers[0]->GetStats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->captures, static_cast<uint64_t>(kCaptures));
  absl::StatusOr<std::optional<Store::RawCapture>> raw = servers[1]->GetRawCapture("cap-7");
  ASSERT_TRUE(raw.ok() && raw->has_value()) << raw.status();
  EXPECT_EQ((*raw)->raw_blob, MakeCapture("cap-7", "dev-1", 7).raw_blob);
}

TEST(PgStoreTest, AStoreWhoseConnectionsWereDroppedWorksAgainAtItsNextCall) {
  const std::string uri = testing::NewPostgresDatabase();
  ASSERT_FALSE(uri.empty());
  std::unique_ptr<SqlStore> store = Open(uri);
  ASSERT_NE(store, nullptr);
  absl::StatusOr<bool> put = store->PutCapture(MakeCapture("cap-1", "dev-1", 1));
  ASSERT_TRUE(put.ok() && *put) << put.status();

  // As a database restart or failover would: every other connection to the database is ended.
  absl::StatusOr<std::unique_ptr<PgConnection>> admin = PgConnection::Connect(uri);
  ASSERT_TRUE(admin.ok()) << admin.status();
  absl::StatusOr<std::vector<bool>> ended =
      QueryAll(**admin,
               "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
               "AND pid <> pg_backend_pid()",
               {}, [](const SqlRow& row) { return row.ColumnInt64(0) == 1; });
  ASSERT_TRUE(ended.ok()) << ended.status();
  ASSERT_EQ(ended->size(), PgStoreOptions().writers + PgStoreOptions().readers);  // every connection of the store

  // The call that finds its connection gone fails as Unavailable (it cannot know whether it ran); the
  // next one reconnects.
  absl::StatusOr<bool> first = store->HasCapture("cap-1");
  if (!first.ok()) {
    EXPECT_EQ(first.status().code(), absl::StatusCode::kUnavailable) << first.status();
  }
  absl::StatusOr<bool> has = store->HasCapture("cap-1");
  ASSERT_TRUE(has.ok()) << has.status();
  EXPECT_TRUE(*has);
  absl::StatusOr<bool> write = store->PutCapture(MakeCapture("cap-2", "dev-1", 2));
  if (!write.ok()) {
    EXPECT_EQ(write.status().code(), absl::StatusCode::kUnavailable) << write.status();
    write = store->PutCapture(MakeCapture("cap-2", "dev-1", 2));
  }
  ASSERT_TRUE(write.ok()) << write.status();
  EXPECT_TRUE(*write);
}

// The round trips are what PostgreSQL's ingest waits for: the captures' rows (whose answers say which are
// new), then everything else with the COMMIT — never one a capture.
TEST(PgStoreTest, ABatchOfCapturesCostsTwoRoundTripsHoweverManyItHolds) {
  const std::string uri = testing::NewPostgresDatabase();
  ASSERT_FALSE(uri.empty());
  absl::StatusOr<std::unique_ptr<PgConnection>> writer = PgConnection::Connect(uri);
  ASSERT_TRUE(writer.ok()) << writer.status();
  ASSERT_TRUE(MigratePgToLatest(**writer).ok());
  const PgConnection& counted = **writer;
  absl::StatusOr<std::unique_ptr<PgConnection>> reader = PgConnection::Connect(uri);
  ASSERT_TRUE(reader.ok()) << reader.status();
  std::vector<std::unique_ptr<SqlConnection>> writers, readers;
  writers.push_back(*std::move(writer));
  readers.push_back(*std::move(reader));
  SqlStore store(std::make_shared<SqlConnectionPool>(std::move(writers)),
                 std::make_shared<SqlConnectionPool>(std::move(readers)), /*shared=*/true);

  uint64_t before = counted.round_trips();
  absl::StatusOr<bool> one = store.PutCapture(MakeCapture("cap-0", "dev-1", 0));
  ASSERT_TRUE(one.ok() && *one) << one.status();
  EXPECT_EQ(counted.round_trips() - before, 2u);

  std::vector<CaptureRecord> five;
  for (int i = 1; i <= 5; ++i) five.push_back(MakeCapture("cap-" + std::to_string(i), i % 2 ? "dev-1" : "dev-2", i));
  before = counted.round_trips();
  const uint64_t statements_before = counted.statements();
  absl::StatusOr<std::vector<bool>> stored = store.PutCaptures(five);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(*stored, std::vector<bool>(5, true));
  EXPECT_EQ(counted.round_trips() - before, 2u);
  // BEGIN and 5 captures' rows; 5 reports, each with its report frame in one statement; each device's row
  // (2); COMMIT. The statements were prepared with the first capture.
  EXPECT_EQ(counted.statements() - statements_before, 1u + 5 + 5 + 2 + 1);
}

// PostgreSQL stores a capture's report and its frame in one statement, the frame numbered by what the
// report's INSERT returns and its base found by the keyframe's id: a delta's frame names its keyframe's
// report, in the keyframe's batch and in a later one, and every report reads back as stored.
TEST(PgStoreTest, ADeltasReportFrameNamesItsKeyframesReportInItsBatchOrALaterOne) {
  const std::string uri = testing::NewPostgresDatabase();
  ASSERT_FALSE(uri.empty());
  std::unique_ptr<SqlStore> store = Open(uri);
  ASSERT_NE(store, nullptr);
  auto capture = [](int minute, const std::string& raw_base) {
    CaptureRecord c = MakeCapture("cap-" + std::to_string(minute), "dev-1", minute);
    c.raw_base = raw_base;
    c.report.captured_at = c.captured_at;
    c.report.device.total_kb = 3'000'000 + minute;
    for (int p = 0; p < 20; ++p) {
      report::ProcessReport& pr = c.report.processes[1000 + p];
      pr.pid = 1000 + p;
      pr.name = "com.example.app" + std::to_string(p);
      pr.total_kb = 20'000 + p * 313 + minute;
    }
    c.report_json = report::ReportToJson(c.report, -1);
    return c;
  };
  const std::vector<CaptureRecord> first = {capture(0, ""), capture(1, "cap-0")};
  absl::StatusOr<std::vector<bool>> stored = store->PutCaptures(first);
  ASSERT_TRUE(stored.ok()) << stored.status();
  const CaptureRecord later = capture(2, "cap-0");
  absl::StatusOr<bool> put = store->PutCapture(later);
  ASSERT_TRUE(put.ok() && *put) << put.status();

  absl::StatusOr<std::unique_ptr<PgConnection>> db = PgConnection::Connect(uri);
  ASSERT_TRUE(db.ok()) << db.status();
  absl::StatusOr<std::vector<std::string>> frames = QueryAll(
      **db,
      "SELECT r.capture_id || ' ' || COALESCE(k.capture_id, '-') FROM device_reports AS r JOIN report_blobs AS b ON "
      "b.capture_no = r.capture_no LEFT JOIN device_reports AS k ON k.capture_no = b.base_no ORDER BY r.capture_id",
      {}, [](const SqlRow& row) { return row.ColumnText(0); });
  ASSERT_TRUE(frames.ok()) << frames.status();
  EXPECT_EQ(*frames, (std::vector<std::string>{"cap-0 -", "cap-1 cap-0", "cap-2 cap-0"}));
  for (const CaptureRecord& c : {first[0], first[1], later}) {
    absl::StatusOr<std::optional<StoredReport>> report = store->GetReportByCapture(c.capture_id);
    ASSERT_TRUE(report.ok() && report->has_value()) << report.status();
    EXPECT_EQ((*report)->report_json, c.report_json) << c.capture_id;
  }
}

}  // namespace
}  // namespace memfleet::storage
