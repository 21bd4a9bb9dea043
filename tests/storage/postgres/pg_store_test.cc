// What only PgStore has to get right, on a real PostgreSQL (tests/support/postgres_server.h): several
// servers on one database (each its own PgStore) storing the same captures at once store each once and
// tell exactly one of them it is new, and a store whose connections the server dropped works again at
// its next call. Everything the two backends share is in the suites run on both (store_backends.h).
#include "storage/postgres/pg_store.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "storage/postgres/pg_connection.h"
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

std::unique_ptr<PgStore> Open(const std::string& uri) {
  absl::StatusOr<std::unique_ptr<PgStore>> store = PgStore::Open(uri);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? *std::move(store) : nullptr;
}

TEST(PgStoreTest, ServersStoringTheSameCapturesAtOnceStoreEachOnceAndSayNewOnce) {
  const std::string uri = testing::NewPostgresDatabase();
  ASSERT_FALSE(uri.empty());
  constexpr int kServers = 3, kCaptures = 30;
  std::vector<std::unique_ptr<PgStore>> servers;
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
        absl::StatusOr<bool> r = servers[static_cast<size_t>(s)]->PutCapture(
            MakeCapture("cap-" + std::to_string(id), "dev-1", id));
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
  std::unique_ptr<PgStore> store = Open(uri);
  ASSERT_NE(store, nullptr);
  absl::StatusOr<bool> put = store->PutCapture(MakeCapture("cap-1", "dev-1", 1));
  ASSERT_TRUE(put.ok() && *put) << put.status();

  // As a database restart or failover would: every other connection to the database is ended.
  absl::StatusOr<PgConnection> admin = PgConnection::Connect(uri);
  ASSERT_TRUE(admin.ok()) << admin.status();
  absl::StatusOr<PgResult> ended = admin->Query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
      "AND pid <> pg_backend_pid()",
      {});
  ASSERT_TRUE(ended.ok()) << ended.status();
  ASSERT_EQ(ended->RowCount(), 2);  // the store's writer and reader

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

// A capture's process rows go in one statement, as arrays in PostgreSQL's text form: names that array
// syntax gives a meaning to (quotes, backslashes, commas, braces, the word NULL, nothing) and unknown
// figures must come back exactly as written.
TEST(PgStoreTest, ProcessRowsComeBackAsWrittenWhateverTheirNames) {
  const std::string uri = testing::NewPostgresDatabase();
  ASSERT_FALSE(uri.empty());
  std::unique_ptr<PgStore> store = Open(uri);
  ASSERT_NE(store, nullptr);
  CaptureRecord c = MakeCapture("cap-names", "dev-1", 1);
  const std::vector<std::string> names = {"say \"hi\"", "back\\slash", "a,b", "{braces}", "NULL", "", "com.app:remote"};
  for (size_t i = 0; i < names.size(); ++i) {
    report::ProcessReport& p = c.report.processes[static_cast<int>(100 + i)];
    p.pid = static_cast<int>(100 + i);
    p.name = names[i];
    if (i % 2 == 0) p.oom_score_adj = -900 + static_cast<int>(i);  // odd ones unknown
    if (i != 3) p.pss_kb = 1000 * static_cast<int64_t>(i + 1);    // one unknown PSS
    p.cached = i == 4;
  }
  absl::StatusOr<bool> stored = store->PutCapture(c);
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_TRUE(*stored);
  absl::StatusOr<PgConnection> db = PgConnection::Connect(uri);
  ASSERT_TRUE(db.ok()) << db.status();
  absl::StatusOr<PgResult> rows = db->Query(
      "SELECT pid, name, oom_score_adj, pss_kb, cached, device_id, captured_at FROM process_reports "
      "WHERE capture_id = $1 ORDER BY pid",
      {PgParam::Text("cap-names")});
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->RowCount(), static_cast<int>(names.size()));
  for (int i = 0; i < rows->RowCount(); ++i) {
    const PgRow row = rows->Row(i);
    SCOPED_TRACE(names[static_cast<size_t>(i)]);
    EXPECT_EQ(row.ColumnInt64(0), 100 + i);
    EXPECT_EQ(row.ColumnText(1), names[static_cast<size_t>(i)]);
    EXPECT_FALSE(row.ColumnIsNull(1));
    EXPECT_EQ(row.ColumnOptionalInt64(2), i % 2 == 0 ? std::optional<int64_t>(-900 + i) : std::nullopt);
    EXPECT_EQ(row.ColumnOptionalInt64(3), i != 3 ? std::optional<int64_t>(1000 * (i + 1)) : std::nullopt);
    EXPECT_EQ(row.ColumnInt64(4), i == 4 ? 1 : 0);
    EXPECT_EQ(row.ColumnText(5), "dev-1");
    EXPECT_EQ(row.ColumnText(6), "2026-12-01T10:01:00.000Z");  // as the store writes every time
  }
}

}  // namespace
}  // namespace memfleet::storage
