// SqlConnection: one connection to the database the store keeps its tables in, as the store (sql_store.h)
// uses it, whichever engine is behind it — SQLite (sqlite/sqlite_connection.h) or PostgreSQL
// (postgres/pg_connection.h). The store's SQL is written once, with parameters ?1, ?2, ...: PostgreSQL's
// connection rewrites them to $1, $2, ... once per statement text. Every statement is prepared once per
// connection and reused; rows are read through SqlRow.
//
//   MEMFLEET_ASSIGN_OR_RETURN(std::vector<std::string> ids,
//       QueryAll(db, "SELECT capture_id FROM captures WHERE device_id = ?1", {SqlValue::Text(id)},
//                [](const SqlRow& row) { return row.ColumnText(0); }));
//
// Round trips: Send is for a statement whose answer the caller does not wait for (an INSERT in a capture's
// transaction). PostgreSQL queues it and sends the queue with the next statement the caller does wait for
// (Query, Exec, Commit), in one round trip (libpq's pipeline mode); an error of a queued statement is then
// that call's error. SQLite has no round trip to save: Send runs the statement at once.
//
// Threads: a connection is used by one thread at a time (SqlConnectionPool hands them out).
#ifndef MEMFLEET_STORAGE_SQL_CONNECTION_H_
#define MEMFLEET_STORAGE_SQL_CONNECTION_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace memfleet::storage {

enum class SqlDialect { kSqlite, kPostgres };

// One statement parameter.
class SqlValue {
 public:
  enum class Kind { kNull, kInt, kText, kBlob };

  static SqlValue Null() { return SqlValue(Kind::kNull, 0, {}); }
  static SqlValue Int(int64_t v) { return SqlValue(Kind::kInt, v, {}); }
  // nullopt binds NULL: an unknown figure stays unknown in the database.
  static SqlValue OptionalInt(std::optional<int64_t> v) { return v.has_value() ? Int(*v) : Null(); }
  static SqlValue Text(std::string_view text) { return SqlValue(Kind::kText, 0, std::string(text)); }
  // "" binds NULL (a column where NULL, not '', means "unknown").
  static SqlValue TextOrNull(std::string_view text) { return text.empty() ? Null() : Text(text); }
  static SqlValue Blob(std::string_view bytes) { return SqlValue(Kind::kBlob, 0, std::string(bytes)); }

  Kind kind() const { return kind_; }
  int64_t int_value() const { return int_; }
  const std::string& bytes() const { return bytes_; }  // text or blob

 private:
  SqlValue(Kind kind, int64_t i, std::string bytes) : kind_(kind), int_(i), bytes_(std::move(bytes)) {}
  Kind kind_;
  int64_t int_;
  std::string bytes_;
};

using SqlParams = std::vector<SqlValue>;

// One result row, valid while the callback that receives it runs. Column indexes start at 0.
class SqlRow {
 public:
  virtual ~SqlRow() = default;
  virtual int ColumnCount() const = 0;
  virtual bool ColumnIsNull(int index) const = 0;
  // 0 for NULL (or, on PostgreSQL, a value that is not an integer: a boolean is 1 for true).
  virtual int64_t ColumnInt64(int index) const = 0;
  virtual std::optional<int64_t> ColumnOptionalInt64(int index) const = 0;
  virtual std::string ColumnText(int index) const = 0;  // "" for NULL
  virtual std::string ColumnBlob(int index) const = 0;  // bytes; "" for NULL
};

using SqlRowFn = std::function<void(const SqlRow&)>;

enum class SqlTransactionKind {
  kWrite,     // takes the write lock at once where the engine has one (SQLite's BEGIN IMMEDIATE)
  kSnapshot,  // reads only, every statement on one snapshot of the database
};

class SqlConnection {
 public:
  virtual ~SqlConnection() = default;

  virtual SqlDialect dialect() const = 0;

  // Runs ';'-separated statements that take no parameters (DDL, PRAGMA, SET), at once.
  virtual absl::Status Exec(std::string_view sql) = 0;
  // One statement with its parameters (?1 ...); `on_row` (may be empty) gets each row it returns. Returns
  // the rows an INSERT, UPDATE or DELETE changed (0 for an INSERT ... ON CONFLICT DO NOTHING that did not).
  virtual absl::StatusOr<int64_t> Query(std::string_view sql, SqlParams params, const SqlRowFn& on_row) = 0;
  // A statement whose answer the caller does not wait for (see the header comment): `on_row` and `changed`
  // (either may be empty) receive it when the statement runs — at once on SQLite; on PostgreSQL with the
  // next Flush, Query, Exec or Commit — and must live until then. Outside a transaction it runs at once.
  virtual absl::Status Send(std::string_view sql, SqlParams params, SqlRowFn on_row = SqlRowFn(),
                            int64_t* changed = nullptr) = 0;
  // Runs the statements Send queued (PostgreSQL), in one round trip; their first error.
  virtual absl::Status Flush() = 0;

  virtual absl::Status Begin(SqlTransactionKind kind) = 0;
  // OK once the transaction is committed (durable: SQLite's synchronous=FULL, PostgreSQL's
  // synchronous_commit); Aborted when the engine had already rolled it back after an error.
  virtual absl::Status Commit() = 0;
  // Safe to call when there is no transaction, or the engine already rolled it back.
  virtual void Rollback() = 0;
};

// BEGIN ... COMMIT; rolls back on destruction unless committed.
class SqlTransaction {
 public:
  static absl::StatusOr<SqlTransaction> Begin(SqlConnection& db, SqlTransactionKind kind = SqlTransactionKind::kWrite) {
    if (absl::Status s = db.Begin(kind); !s.ok()) return s;
    return SqlTransaction(&db);
  }
  SqlTransaction(SqlTransaction&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}
  SqlTransaction& operator=(SqlTransaction&&) = delete;
  SqlTransaction(const SqlTransaction&) = delete;
  SqlTransaction& operator=(const SqlTransaction&) = delete;
  ~SqlTransaction() { Rollback(); }

  absl::Status Commit() {
    if (db_ == nullptr) return absl::FailedPreconditionError("transaction already ended");
    return std::exchange(db_, nullptr)->Commit();
  }
  void Rollback() {
    if (db_ != nullptr) std::exchange(db_, nullptr)->Rollback();
  }

 private:
  explicit SqlTransaction(SqlConnection* db) : db_(db) {}
  SqlConnection* db_;
};

// What `read(const SqlRow&)` makes of one row.
template <typename Read>
using SqlRowOf = std::invoke_result_t<const Read&, const SqlRow&>;

// Every row of `sql`, each read by `read`.
template <typename Read>
absl::StatusOr<std::vector<SqlRowOf<Read>>> QueryAll(SqlConnection& db, std::string_view sql, SqlParams params,
                                                     const Read& read) {
  std::vector<SqlRowOf<Read>> rows;
  absl::StatusOr<int64_t> done =
      db.Query(sql, std::move(params), [&](const SqlRow& row) { rows.push_back(read(row)); });
  if (!done.ok()) return done.status();
  return rows;
}

// The first row of `sql` read by `read`; nullopt when it returns none.
template <typename Read>
absl::StatusOr<std::optional<SqlRowOf<Read>>> QueryFirst(SqlConnection& db, std::string_view sql, SqlParams params,
                                                         const Read& read) {
  std::optional<SqlRowOf<Read>> first;
  absl::StatusOr<int64_t> done = db.Query(sql, std::move(params), [&](const SqlRow& row) {
    if (!first.has_value()) first = read(row);
  });
  if (!done.ok()) return done.status();
  return first;
}

// A statement whose rows the caller does not read; the rows it changed.
inline absl::StatusOr<int64_t> RunSql(SqlConnection& db, std::string_view sql, SqlParams params) {
  return db.Query(sql, std::move(params), SqlRowFn());
}

// "INSERT INTO captures (capture_id, ..." -> the first few words, whitespace collapsed, for messages.
std::string SqlFirstWords(std::string_view sql);

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_SQL_CONNECTION_H_
