// SqlConnection (storage/sql_connection.h) on each engine behind it: the same statement text with ?N
// parameters gives the same rows and counts; statements sent without waiting get their answers (and
// their errors) with the next statement waited for; transactions commit or leave nothing; a pool lends a
// connection to one thread at a time.
#include "storage/sql_connection.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "storage/sql_connection_pool.h"
#include "storage/sqlite/sqlite_connection.h"
#include "storage/sqlite/sqlite_db.h"
#include "tests/support/temp_dir.h"

namespace memfleet::storage {
namespace {

enum class Engine { kSqlite };

std::string EngineName(const ::testing::TestParamInfo<Engine>&) { return "Sqlite"; }

class SqlConnectionTest : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    db_ = Connect();
    ASSERT_NE(db_, nullptr);
    // The same text on both engines: INTEGER, TEXT and BLOB are names both accept.
    ASSERT_TRUE(db_->Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, n INTEGER, b BLOB)").ok());
  }

  // Another connection to the same database.
  std::unique_ptr<SqlConnection> Connect() {
    absl::StatusOr<SqliteDb> db = SqliteDb::Open(dir_.path() + "/t.db", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    EXPECT_TRUE(db.ok()) << db.status();
    if (!db.ok()) return nullptr;
    EXPECT_TRUE(db->Exec("PRAGMA journal_mode = WAL").ok());
    return std::make_unique<SqliteConnection>(*std::move(db));
  }

  int64_t Count(SqlConnection& db) {
    absl::StatusOr<std::optional<int64_t>> n =
        QueryFirst(db, "SELECT COUNT(*) FROM t", {}, [](const SqlRow& row) { return row.ColumnInt64(0); });
    EXPECT_TRUE(n.ok()) << n.status();
    return n.ok() && n->has_value() ? **n : -1;
  }

  testing::TempDir dir_{"memfleet_sql"};
  std::unique_ptr<SqlConnection> db_;
};

TEST_P(SqlConnectionTest, EveryKindOfValueRoundTripsAndNullStaysNull) {
  const std::string bytes("\0\x01\xff zstd", 8);  // a blob with a NUL and a high byte
  absl::StatusOr<int64_t> inserted =
      RunSql(*db_, "INSERT INTO t (id, name, n, b) VALUES (?1, ?2, ?3, ?4)",
          {SqlValue::Int(7), SqlValue::Text("systemui"), SqlValue::Int(-9'000'000'000), SqlValue::Blob(bytes)});
  ASSERT_TRUE(inserted.ok()) << inserted.status();
  EXPECT_EQ(*inserted, 1);
  ASSERT_TRUE(RunSql(*db_, "INSERT INTO t (id, name, n, b) VALUES (?1, ?2, ?3, ?4)",
                  {SqlValue::Int(8), SqlValue::Text(""), SqlValue::OptionalInt(std::nullopt), SqlValue::Null()})
                  .ok());
  struct Row {
    std::string name;
    std::optional<int64_t> n;
    std::string b;
    bool b_null;
  };
  absl::StatusOr<std::vector<Row>> rows = QueryAll(*db_, "SELECT name, n, b FROM t ORDER BY id", {}, [](const SqlRow& r) {
    return Row{r.ColumnText(0), r.ColumnOptionalInt64(1), r.ColumnBlob(2), r.ColumnIsNull(2)};
  });
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].name, "systemui");
  EXPECT_EQ((*rows)[0].n, -9'000'000'000);
  EXPECT_EQ((*rows)[0].b, bytes);
  EXPECT_EQ((*rows)[1].name, "");
  EXPECT_FALSE((*rows)[1].n.has_value());  // NULL, not 0
  EXPECT_TRUE((*rows)[1].b_null);
}

TEST_P(SqlConnectionTest, ParametersAreNumberedNotPositionalAndQuotedMarksAreText) {
  ASSERT_TRUE(RunSql(*db_, "INSERT INTO t (name, n) VALUES (?2, ?1)", {SqlValue::Int(5), SqlValue::Text("a")}).ok());
  // ?1 twice, ?2 before it, and a '?1' inside a string literal that is not a parameter.
  absl::StatusOr<std::vector<std::string>> rows =
      QueryAll(*db_, "SELECT name || '?1' FROM t WHERE n = ?2 AND name = ?1 AND n >= ?2", {SqlValue::Text("a"), SqlValue::Int(5)},
               [](const SqlRow& r) { return r.ColumnText(0); });
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(*rows, std::vector<std::string>{"a?1"});
}

TEST_P(SqlConnectionTest, ChangedRowsCountWritesOnly) {
  ASSERT_TRUE(RunSql(*db_, "INSERT INTO t (name, n) VALUES ('a', 1), ('b', 2), ('c', 3)", {}).ok());
  absl::StatusOr<int64_t> updated = RunSql(*db_, "UPDATE t SET n = n + 1 WHERE n >= ?1", {SqlValue::Int(2)});
  ASSERT_TRUE(updated.ok());
  EXPECT_EQ(*updated, 2);
  absl::StatusOr<int64_t> read = RunSql(*db_, "SELECT * FROM t", {});
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, 0);  // not the UPDATE's count again
  absl::StatusOr<int64_t> nothing =
      RunSql(*db_, "INSERT INTO t (name) VALUES (?1) ON CONFLICT (name) DO NOTHING", {SqlValue::Text("a")});
  ASSERT_TRUE(nothing.ok());
  EXPECT_EQ(*nothing, 0);  // how a duplicate is told from a new row
}

TEST_P(SqlConnectionTest, SentStatementsAnswerByTheNextFlush) {
  ASSERT_TRUE(db_->Begin(SqlTransactionKind::kWrite).ok());
  int64_t added = -1;
  std::vector<std::string> seen;
  ASSERT_TRUE(db_->Send("INSERT INTO t (name) VALUES (?1)", {SqlValue::Text("x")}, SqlRowFn(), &added).ok());
  ASSERT_TRUE(db_->Send("SELECT name FROM t", {}, [&seen](const SqlRow& r) { seen.push_back(r.ColumnText(0)); }).ok());
  ASSERT_TRUE(db_->Flush().ok());
  EXPECT_EQ(added, 1);
  EXPECT_EQ(seen, std::vector<std::string>{"x"});
  ASSERT_TRUE(db_->Commit().ok());
  EXPECT_EQ(Count(*db_), 1);
}

TEST_P(SqlConnectionTest, ACommitAfterAFailedStatementFailsAndStoresNothing) {
  ASSERT_TRUE(RunSql(*db_, "INSERT INTO t (name) VALUES ('taken')", {}).ok());
  ASSERT_TRUE(db_->Begin(SqlTransactionKind::kWrite).ok());
  absl::Status first = db_->Send("INSERT INTO t (name) VALUES ('new')", {});
  absl::Status second = db_->Send("INSERT INTO t (name) VALUES ('taken')", {});  // a unique key it breaks
  absl::Status committed = first.ok() && second.ok() ? db_->Commit() : second;
  if (committed.ok()) db_->Rollback();
  EXPECT_FALSE(committed.ok());
  EXPECT_EQ(committed.code(), absl::StatusCode::kAlreadyExists) << committed;
  db_->Rollback();
  EXPECT_EQ(Count(*db_), 1);  // "new" went with the failed transaction
  // The connection is usable afterwards.
  ASSERT_TRUE(RunSql(*db_, "INSERT INTO t (name) VALUES ('after')", {}).ok());
  EXPECT_EQ(Count(*db_), 2);
}

TEST_P(SqlConnectionTest, ARolledBackTransactionLeavesNothing) {
  {
    absl::StatusOr<SqlTransaction> txn = SqlTransaction::Begin(*db_);
    ASSERT_TRUE(txn.ok());
    ASSERT_TRUE(db_->Send("INSERT INTO t (name) VALUES ('gone')", {}).ok());
    ASSERT_TRUE(RunSql(*db_, "INSERT INTO t (name) VALUES ('gone too')", {}).ok());
  }  // destroyed uncommitted
  EXPECT_EQ(Count(*db_), 0);
}

TEST_P(SqlConnectionTest, ASnapshotDoesNotSeeWhatCommitsDuringIt) {
  std::unique_ptr<SqlConnection> writer = Connect();
  ASSERT_NE(writer, nullptr);
  ASSERT_TRUE(RunSql(*writer, "INSERT INTO t (name) VALUES ('one')", {}).ok());
  absl::StatusOr<SqlTransaction> snapshot = SqlTransaction::Begin(*db_, SqlTransactionKind::kSnapshot);
  ASSERT_TRUE(snapshot.ok());
  EXPECT_EQ(Count(*db_), 1);
  ASSERT_TRUE(RunSql(*writer, "INSERT INTO t (name) VALUES ('two')", {}).ok());
  EXPECT_EQ(Count(*db_), 1);
  ASSERT_TRUE(snapshot->Commit().ok());
  EXPECT_EQ(Count(*db_), 2);
}

TEST_P(SqlConnectionTest, ErrorsNameTheStatement) {
  absl::StatusOr<int64_t> bad = RunSql(*db_, "SELECT * FROM no_such_table WHERE id = ?1", {SqlValue::Int(1)});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("no_such_table"), std::string::npos) << bad.status();
  EXPECT_NE(bad.status().message().find("SELECT * FROM no_such_table"), std::string::npos) << bad.status();
}

TEST_P(SqlConnectionTest, APoolLendsEachConnectionToOneThreadAtATime) {
  std::vector<std::unique_ptr<SqlConnection>> connections;
  connections.push_back(Connect());
  SqlConnectionPool pool(std::move(connections));
  absl::Notification lent, second_waiting, second_got_it;
  std::atomic<bool> released{false};
  std::thread holder([&] {
    SqlConnectionPool::Lease db = pool.Acquire();
    lent.Notify();
    second_waiting.WaitForNotification();
    released = true;
  });
  lent.WaitForNotification();
  std::thread second([&] {
    second_waiting.Notify();
    SqlConnectionPool::Lease db = pool.Acquire();  // waits for the holder
    EXPECT_TRUE(released.load());
    second_got_it.Notify();
  });
  holder.join();
  second.join();
  EXPECT_TRUE(second_got_it.HasBeenNotified());
}

INSTANTIATE_TEST_SUITE_P(Engines, SqlConnectionTest, ::testing::Values(Engine::kSqlite), EngineName);

}  // namespace
}  // namespace memfleet::storage
