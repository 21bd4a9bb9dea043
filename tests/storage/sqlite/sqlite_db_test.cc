#include "storage/sqlite/sqlite_db.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"

namespace memfleet::storage {
namespace sqlite_db_test {
namespace {

using memfleet::testing::TempDir;

constexpr int kCreate = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;

class SqliteDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    path_ = dir_.path() + "/test.db";
    absl::StatusOr<SqliteDb> db = SqliteDb::Open(path_, kCreate);
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = std::move(*db);
    ASSERT_TRUE(db_.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER, s TEXT, b BLOB)").ok());
  }

  TempDir dir_;
  std::string path_;
  SqliteDb db_;
};

TEST_F(SqliteDbTest, OpenCreatesARealFile) {
  EXPECT_TRUE(std::filesystem::exists(path_));
  EXPECT_FALSE(db_.IsReadOnly());
  EXPECT_FALSE(db_.InTransaction());
}

TEST_F(SqliteDbTest, BindAndReadBackEveryType) {
  absl::StatusOr<Statement> ins = db_.Prepare("INSERT INTO t (id, n, s, b) VALUES (?1, ?2, ?3, ?4)");
  ASSERT_TRUE(ins.ok()) << ins.status();
  // Extremes of int64, text with a multi-byte character, and a blob with NUL and 0xff bytes: a
  // strlen-based bind would cut the blob at the NUL.
  const std::string blob("a\0b\xff", 4);
  ASSERT_TRUE(ins->BindInt64(1, 1).ok());
  ASSERT_TRUE(ins->BindInt64(2, std::numeric_limits<int64_t>::min()).ok());
  ASSERT_TRUE(ins->BindText(3, "caf\xc3\xa9").ok());
  ASSERT_TRUE(ins->BindBlob(4, blob).ok());
  ASSERT_TRUE(ins->StepDone().ok());
  EXPECT_EQ(db_.Changes(), 1);

  ins->Reset();
  ASSERT_TRUE(ins->BindInt64(1, 2).ok());
  ASSERT_TRUE(ins->BindOptionalInt64(2, std::nullopt).ok());
  ASSERT_TRUE(ins->BindNull(3).ok());
  ASSERT_TRUE(ins->BindBlob(4, "").ok());  // an empty blob is a value, not NULL
  ASSERT_TRUE(ins->StepDone().ok());

  absl::StatusOr<Statement> sel = db_.Prepare("SELECT n, s, b, typeof(b) FROM t ORDER BY id");
  ASSERT_TRUE(sel.ok()) << sel.status();
  absl::StatusOr<StepResult> r = sel->Step();
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(*r, StepResult::kRow);
  EXPECT_EQ(sel->ColumnCount(), 4);
  EXPECT_EQ(sel->ColumnInt64(0), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(sel->ColumnOptionalInt64(0), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(sel->ColumnText(1), "caf\xc3\xa9");
  EXPECT_EQ(sel->ColumnBlob(2), blob);

  r = sel->Step();
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(*r, StepResult::kRow);
  EXPECT_TRUE(sel->ColumnIsNull(0));
  EXPECT_EQ(sel->ColumnOptionalInt64(0), std::nullopt);
  EXPECT_TRUE(sel->ColumnIsNull(1));
  EXPECT_EQ(sel->ColumnText(1), "");
  EXPECT_FALSE(sel->ColumnIsNull(2));
  EXPECT_EQ(sel->ColumnText(3), "blob");

  r = sel->Step();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, StepResult::kDone);
}

TEST_F(SqliteDbTest, ResetClearsBindings) {
  ASSERT_TRUE(db_.Exec("INSERT INTO t (id, n) VALUES (1, 10), (2, 20)").ok());
  absl::StatusOr<Statement> sel = db_.Prepare("SELECT count(*) FROM t WHERE n = ?1 OR ?1 IS NULL");
  ASSERT_TRUE(sel.ok());
  ASSERT_TRUE(sel->BindInt64(1, 20).ok());
  ASSERT_EQ(*sel->Step(), StepResult::kRow);
  EXPECT_EQ(sel->ColumnInt64(0), 1);
  sel->Reset();
  // A stale binding (20) would still count 1; cleared, ?1 is NULL and both rows match.
  ASSERT_EQ(*sel->Step(), StepResult::kRow);
  EXPECT_EQ(sel->ColumnInt64(0), 2);
}

TEST_F(SqliteDbTest, SyntaxErrorNamesSqliteMessageAndStatement) {
  absl::StatusOr<Statement> st = db_.Prepare("SELEC id FROM t WHERE n = 1");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("syntax error"), std::string::npos) << st.status();
  EXPECT_NE(st.status().message().find("SELEC id FROM t"), std::string::npos) << st.status();

  absl::Status exec = db_.Exec("CREATE TABLE t (x)");
  ASSERT_FALSE(exec.ok());
  EXPECT_NE(exec.message().find("already exists"), std::string::npos) << exec;
  EXPECT_NE(exec.message().find("CREATE TABLE t"), std::string::npos) << exec;
}

TEST_F(SqliteDbTest, PrepareRejectsTwoStatements) {
  absl::StatusOr<Statement> st = db_.Prepare("DELETE FROM t; DROP TABLE t");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.status().code(), absl::StatusCode::kInvalidArgument);
  // A trailing ';' is still one statement.
  EXPECT_TRUE(db_.Prepare("SELECT 1;  ").ok());
  EXPECT_EQ(db_.Prepare("   ").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(SqliteDbTest, StepDoneRejectsARow) {
  absl::StatusOr<Statement> st = db_.Prepare("SELECT 1");
  ASSERT_TRUE(st.ok());
  EXPECT_FALSE(st->StepDone().ok());
}

TEST_F(SqliteDbTest, DuplicateKeyIsAlreadyExists) {
  ASSERT_TRUE(db_.Exec("INSERT INTO t (id) VALUES (7)").ok());
  absl::StatusOr<Statement> st = db_.Prepare("INSERT INTO t (id) VALUES (?1)");
  ASSERT_TRUE(st.ok());
  ASSERT_TRUE(st->BindInt64(1, 7).ok());
  absl::Status s = st->StepDone();
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists) << s;
  EXPECT_NE(s.message().find("UNIQUE constraint failed"), std::string::npos) << s;
}

TEST_F(SqliteDbTest, BindOutOfRangeIndexIsAnError) {
  absl::StatusOr<Statement> st = db_.Prepare("SELECT ?1");
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->BindInt64(2, 1).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(SqliteDbTest, TransactionRollsBackUnlessCommitted) {
  {
    absl::StatusOr<Transaction> txn = Transaction::Begin(db_);
    ASSERT_TRUE(txn.ok()) << txn.status();
    EXPECT_TRUE(db_.InTransaction());
    ASSERT_TRUE(db_.Exec("INSERT INTO t (id) VALUES (1)").ok());
  }  // destroyed without Commit
  EXPECT_FALSE(db_.InTransaction());
  {
    absl::StatusOr<Transaction> txn = Transaction::Begin(db_);
    ASSERT_TRUE(txn.ok());
    ASSERT_TRUE(db_.Exec("INSERT INTO t (id) VALUES (2)").ok());
    ASSERT_TRUE(txn->Commit().ok());
  }
  absl::StatusOr<Statement> st = db_.Prepare("SELECT group_concat(id) FROM t");
  ASSERT_TRUE(st.ok());
  ASSERT_EQ(*st->Step(), StepResult::kRow);
  EXPECT_EQ(st->ColumnText(0), "2");
}

TEST_F(SqliteDbTest, FullDatabaseIsResourceExhaustedAndRollbackIsSafe) {
  // max_page_count makes the file "full" the way a full disk does (SQLITE_FULL).
  ASSERT_TRUE(db_.Exec("PRAGMA max_page_count = 3").ok());
  absl::StatusOr<Transaction> txn = Transaction::Begin(db_);
  ASSERT_TRUE(txn.ok());
  absl::StatusOr<Statement> st = db_.Prepare("INSERT INTO t (id, b) VALUES (1, ?1)");
  ASSERT_TRUE(st.ok());
  ASSERT_TRUE(st->BindBlob(1, std::string(256 * 1024, 'x')).ok());
  absl::Status s = st->StepDone();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_NE(s.message().find("full"), std::string::npos) << s;
  txn->Rollback();  // whether or not SQLite already rolled back
  EXPECT_FALSE(db_.InTransaction());
}

TEST_F(SqliteDbTest, WriteOnReadOnlyConnectionIsFailedPrecondition) {
  absl::StatusOr<SqliteDb> ro = SqliteDb::Open(path_, SQLITE_OPEN_READONLY);
  ASSERT_TRUE(ro.ok()) << ro.status();
  EXPECT_TRUE(ro->IsReadOnly());
  absl::Status s = ro->Exec("INSERT INTO t (id) VALUES (1)");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("readonly"), std::string::npos) << s;
}

TEST(SqliteDbOpenTest, MissingDirectoryIsNotFoundNamingThePath) {
  absl::StatusOr<SqliteDb> db = SqliteDb::Open("/nonexistent-memfleet-dir/x.db", kCreate);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), absl::StatusCode::kNotFound) << db.status();
  EXPECT_NE(db.status().message().find("/nonexistent-memfleet-dir/x.db"), std::string::npos);
}

TEST(SqliteDbOpenTest, GarbageFileIsDataLoss) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string path = dir.path() + "/garbage.db";
  {
    std::ofstream out(path, std::ios::binary);
    out << std::string(8192, '\x5a');
  }
  absl::StatusOr<SqliteDb> db = SqliteDb::Open(path, kCreate);
  ASSERT_TRUE(db.ok()) << db.status();  // SQLite reads the header lazily
  absl::Status s = db->Exec("SELECT * FROM sqlite_schema");
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
}

TEST(SqlFirstWordsTest, CollapsesWhitespaceAndShortens) {
  EXPECT_EQ(SqlFirstWords("SELECT 1"), "SELECT 1");
  EXPECT_EQ(SqlFirstWords("  INSERT\n  INTO   captures (a, b, c) VALUES (1, 2, 3)"),
            "INSERT INTO captures (a, b, c) ...");
  EXPECT_EQ(SqlFirstWords(""), "");
}

TEST_F(SqliteDbTest, ExplainQueryPlanShowsScanVersusIndex) {
  ASSERT_TRUE(db_.Exec("CREATE INDEX t_by_n ON t (n)").ok());
  absl::StatusOr<std::vector<std::string>> scan = ExplainQueryPlan(db_, "SELECT id FROM t WHERE s = ?1");
  ASSERT_TRUE(scan.ok()) << scan.status();
  ASSERT_EQ(scan->size(), 1u);
  EXPECT_EQ((*scan)[0], "SCAN t");
  absl::StatusOr<std::vector<std::string>> search = ExplainQueryPlan(db_, "SELECT id FROM t WHERE n = ?1");
  ASSERT_TRUE(search.ok()) << search.status();
  ASSERT_EQ(search->size(), 1u);
  EXPECT_EQ((*search)[0], "SEARCH t USING COVERING INDEX t_by_n (n=?)");
}

}  // namespace
}  // namespace sqlite_db_test
}  // namespace memfleet::storage
