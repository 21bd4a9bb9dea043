// SqliteConnection: an SQLite connection (sqlite_db.h) as the store's SqlConnection — each statement
// prepared once and kept, parameters bound by their ?N number, BEGIN IMMEDIATE for a write transaction.
//
//   MEMFLEET_ASSIGN_OR_RETURN(SqliteDb db, SqliteDb::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE));
//   SqliteConnection connection(std::move(db));
//   MEMFLEET_ASSIGN_OR_RETURN(int64_t deleted, Run(connection, "DELETE FROM t WHERE id = ?1", {SqlValue::Int(7)}));
//
// One thread at a time, as every SqlConnection.
#ifndef MEMFLEET_STORAGE_SQLITE_SQLITE_CONNECTION_H_
#define MEMFLEET_STORAGE_SQLITE_SQLITE_CONNECTION_H_

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/sql_connection.h"
#include "storage/sqlite/sqlite_db.h"

namespace memfleet::storage {

class SqliteConnection : public SqlConnection {
 public:
  explicit SqliteConnection(SqliteDb db) : db_(std::move(db)) {}
  ~SqliteConnection() override;

  SqlDialect dialect() const override { return SqlDialect::kSqlite; }
  absl::Status Exec(std::string_view sql) override;
  absl::StatusOr<int64_t> Query(std::string_view sql, SqlParams params, const SqlRowFn& on_row) override;
  absl::Status Send(std::string_view sql, SqlParams params, SqlRowFn on_row, int64_t* changed) override;
  absl::Status Flush() override { return absl::OkStatus(); }
  absl::Status Begin(SqlTransactionKind kind) override;
  absl::Status Commit() override;
  void Rollback() override;

  // The connection itself, for what only SQLite has (PRAGMAs, EXPLAIN QUERY PLAN, the file's size).
  SqliteDb& db() { return db_; }

  // Statements kept prepared; past it, a statement is prepared for its one use (a label lookup with an
  // unusual number of labels, say).
  static constexpr size_t kMaxPreparedStatements = 256;

 private:
  // The kept statement for `sql`, prepared on first use; null when the cache is full (`one_use` then).
  absl::StatusOr<Statement*> Prepared(std::string_view sql, Statement& one_use);

  SqliteDb db_;
  // Keyed by SQL text; destroyed before db_ (declared after it).
  std::map<std::string, std::unique_ptr<Statement>, std::less<>> statements_;
};

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_SQLITE_SQLITE_CONNECTION_H_
