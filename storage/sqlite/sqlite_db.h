// SqliteDb / Statement / Transaction: thin RAII handles over the SQLite C API that report every failure
// as an absl::Status carrying SQLite's message and the first words of the SQL. No exceptions.
//
//   MEMFLEET_ASSIGN_OR_RETURN(SqliteDb db, SqliteDb::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE));
//   MEMFLEET_ASSIGN_OR_RETURN(Statement st, db.Prepare("SELECT model FROM devices WHERE device_id = ?1"));
//   MEMFLEET_RETURN_IF_ERROR(st.BindText(1, id));
//   MEMFLEET_ASSIGN_OR_RETURN(StepResult r, st.Step());   // kRow: st.ColumnText(0)
//
// Ownership and threads: a Statement borrows its SqliteDb's connection and must be destroyed first. One
// connection (and its statements) is used by one thread at a time; callers serialize with a mutex.
#ifndef MEMFLEET_STORAGE_SQLITE_SQLITE_DB_H_
#define MEMFLEET_STORAGE_SQLITE_SQLITE_DB_H_

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/sql_connection.h"  // SqlFirstWords

namespace memfleet::storage {

// The status for SQLite result code `rc` on `db` (may be null), naming the statement by its first words.
// Codes: SQLITE_FULL/NOMEM -> ResourceExhausted, READONLY -> FailedPrecondition, BUSY/LOCKED ->
// Unavailable, CORRUPT/NOTADB -> DataLoss, PERM/AUTH -> PermissionDenied, CANTOPEN -> NotFound,
// CONSTRAINT -> AlreadyExists (unique) or FailedPrecondition, TOOBIG/RANGE -> InvalidArgument,
// IOERR -> Unavailable, anything else -> Internal.
absl::Status SqliteStatus(int rc, sqlite3* db, std::string_view sql);

class Statement;

class SqliteDb {
 public:
  // `flags`: SQLITE_OPEN_* (READONLY, or READWRITE with optional CREATE). Turns on extended result codes.
  static absl::StatusOr<SqliteDb> Open(const std::string& path, int flags);

  SqliteDb() = default;
  SqliteDb(SqliteDb&& other) noexcept;
  SqliteDb& operator=(SqliteDb&& other) noexcept;
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;
  ~SqliteDb();

  // Runs one or more ';'-separated statements that take no parameters (DDL, PRAGMA, BEGIN/COMMIT).
  absl::Status Exec(std::string_view sql);
  // Prepares exactly one statement; trailing text other than whitespace/';' is an InvalidArgument.
  absl::StatusOr<Statement> Prepare(std::string_view sql);

  // Writes the whole database as this connection sees it (what a WAL holds included) to a new file at
  // `path`, with SQLite's online backup; the source may be read-only.
  absl::Status CopyTo(const std::string& path);

  // Rows changed by the last INSERT/UPDATE/DELETE on this connection.
  int64_t Changes() const;
  // True inside BEGIN ... COMMIT (SQLite may end a transaction by itself on some errors, e.g. FULL).
  bool InTransaction() const;
  // True when the main database was opened (or fell back to) read-only.
  bool IsReadOnly() const;

  bool is_open() const { return db_ != nullptr; }
  sqlite3* handle() const { return db_; }

 private:
  explicit SqliteDb(sqlite3* db) : db_(db) {}
  sqlite3* db_ = nullptr;
};

enum class StepResult { kRow, kDone };

class Statement {
 public:
  Statement() = default;
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Parameter indexes start at 1, as in SQLite. Text and blobs are copied (SQLITE_TRANSIENT).
  absl::Status BindInt64(int index, int64_t value);
  absl::Status BindText(int index, std::string_view value);
  absl::Status BindBlob(int index, std::string_view bytes);
  absl::Status BindNull(int index);
  // nullopt binds NULL: an unknown figure stays unknown in the database.
  absl::Status BindOptionalInt64(int index, std::optional<int64_t> value);

  absl::StatusOr<StepResult> Step();
  // True for a statement that cannot change the database (a SELECT).
  bool ReadsOnly() const;
  // Steps a statement that must not return a row (INSERT/UPDATE/DELETE/DDL).
  absl::Status StepDone();

  // Column indexes start at 0. Valid only after Step() returned kRow.
  int ColumnCount() const;
  bool ColumnIsNull(int index) const;
  int64_t ColumnInt64(int index) const;
  std::optional<int64_t> ColumnOptionalInt64(int index) const;
  std::string ColumnText(int index) const;  // "" for NULL
  std::string ColumnBlob(int index) const;  // bytes; "" for NULL

  // Rewinds for another execution and clears bindings; ends the statement's read of the database.
  void Reset();

  const std::string& sql() const { return sql_; }
  bool is_prepared() const { return stmt_ != nullptr; }

 private:
  friend class SqliteDb;
  Statement(sqlite3* db, sqlite3_stmt* stmt, std::string sql) : db_(db), stmt_(stmt), sql_(std::move(sql)) {}
  absl::Status BindResult(int rc, int index) const;

  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

// BEGIN [IMMEDIATE] ... COMMIT; rolls back on destruction unless committed. IMMEDIATE takes the write
// lock up front so two writers never deadlock upgrading a read lock.
class Transaction {
 public:
  static absl::StatusOr<Transaction> Begin(SqliteDb& db, bool immediate = true);

  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  absl::Status Commit();
  // Safe to call when SQLite already rolled back by itself.
  void Rollback();

 private:
  explicit Transaction(SqliteDb* db) : db_(db) {}
  SqliteDb* db_ = nullptr;
};

// The `detail` column of EXPLAIN QUERY PLAN for `sql`, one string per plan row, e.g.
// "SEARCH process_reports USING INDEX process_reports_by_device_name_time (device_id=? AND name=?)".
// Parameters are left unbound (NULL), which does not change the plan's shape.
absl::StatusOr<std::vector<std::string>> ExplainQueryPlan(SqliteDb& db, std::string_view sql);

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_SQLITE_SQLITE_DB_H_
