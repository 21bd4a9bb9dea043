// The PostgreSQL schema (storage/postgres/pg_schema.h) on a real PostgreSQL: servers that start at once
// on one empty database migrate it exactly once, a database that is not memfleet's or is newer is
// refused, and failures carry the server's own message.
#include "storage/postgres/pg_schema.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "storage/postgres/pg_connection.h"
#include "storage/postgres/pg_store.h"
#include "tests/support/postgres_server.h"

namespace memfleet::storage {
namespace {

PgConnection Connect(const std::string& uri) {
  absl::StatusOr<PgConnection> db = PgConnection::Connect(uri);
  EXPECT_TRUE(db.ok()) << db.status();
  return db.ok() ? *std::move(db) : PgConnection();
}

TEST(PgSchemaTest, ServersStartingAtOnceMigrateAnEmptyDatabaseOnce) {
  const std::string uri = testing::NewPostgresDatabase();
  ASSERT_FALSE(uri.empty());
  constexpr int kServers = 6;
  std::atomic<int> opened{0};
  std::vector<std::thread> servers;
  for (int i = 0; i < kServers; ++i) {
    servers.emplace_back([&] {
      absl::StatusOr<std::unique_ptr<PgStore>> store = PgStore::Open(uri);
      if (store.ok()) {
        ++opened;
      } else {
        ADD_FAILURE() << store.status();
      }
    });
  }
  for (std::thread& t : servers) t.join();
  EXPECT_EQ(opened.load(), kServers);
  PgConnection db = Connect(uri);
  absl::StatusOr<int> version = ReadPgSchemaVersion(db);
  ASSERT_TRUE(version.ok()) << version.status();
  EXPECT_EQ(*version, LatestPgSchemaVersion());
  absl::StatusOr<PgResult> rows = db.Query("SELECT COUNT(*) FROM schema_version", {});
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->Row(0).ColumnInt64(0), 1);  // one row: no second CREATE/INSERT slipped through
}

TEST(PgSchemaTest, ADatabaseWithOtherTablesIsNotMigrated) {
  const std::string uri = testing::NewPostgresDatabase();
  ASSERT_FALSE(uri.empty());
  ASSERT_TRUE(Connect(uri).Exec("CREATE TABLE invoices (id BIGINT PRIMARY KEY)").ok());
  absl::StatusOr<std::unique_ptr<PgStore>> store = PgStore::Open(uri);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition) << store.status();
  EXPECT_NE(store.status().message().find("not a memfleet database"), std::string::npos) << store.status();
}

TEST(PgSchemaTest, ANewerDatabaseIsRefused) {
  const std::string uri = testing::NewPostgresDatabase();
  ASSERT_FALSE(uri.empty());
  ASSERT_TRUE(PgStore::Open(uri).ok());
  ASSERT_TRUE(Connect(uri).Exec("UPDATE schema_version SET version = version + 1").ok());
  absl::StatusOr<std::unique_ptr<PgStore>> store = PgStore::Open(uri);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition) << store.status();
  EXPECT_NE(store.status().message().find("newer than this memfleet build"), std::string::npos) << store.status();
}

TEST(PgSchemaTest, ErrorsCarryTheServersMessage) {
  const std::string uri = testing::NewPostgresDatabase();
  ASSERT_FALSE(uri.empty());
  // A database that does not exist: the server says so, by name.
  const std::string missing = uri.substr(0, uri.rfind('/')) + "/no_such_db";
  absl::StatusOr<std::unique_ptr<PgStore>> store = PgStore::Open(missing);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kUnavailable) << store.status();
  EXPECT_NE(store.status().message().find("\"no_such_db\" does not exist"), std::string::npos) << store.status();
  // A statement the server refuses: its message and SQLSTATE, and the statement's first words.
  PgConnection db = Connect(uri);
  absl::StatusOr<PgResult> bad = db.Query("SELECT * FROM no_such_table WHERE id = $1", {PgParam::Int(1)});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("relation \"no_such_table\" does not exist"), std::string::npos)
      << bad.status();
  EXPECT_NE(bad.status().message().find("[42P01]"), std::string::npos) << bad.status();
  EXPECT_NE(bad.status().message().find("SELECT * FROM no_such_table"), std::string::npos) << bad.status();
}

}  // namespace
}  // namespace memfleet::storage
