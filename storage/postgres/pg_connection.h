// PgConnection / PgResult / PgTransaction: thin RAII handles over libpq that report every failure as an
// absl::Status carrying the server's message, its SQLSTATE and the first words of the SQL. Statements
// take parameters $1, $2, ... only (PgParam), never text spliced into SQL. No exceptions.
//
//   MEMFLEET_ASSIGN_OR_RETURN(PgConnection db, PgConnection::Connect("postgresql://memfleet@db:5432/memfleet"));
//   MEMFLEET_ASSIGN_OR_RETURN(PgResult r, db.Query("SELECT model FROM devices WHERE device_id = $1",
//                                                  {PgParam::Text(id)}));
//   for (int i = 0; i < r.RowCount(); ++i) r.Row(i).ColumnText(0);
//
// Ownership and threads: a PgResult owns its rows and outlives the query; a connection is used by one
// thread at a time (callers serialize with a mutex), as libpq requires.
#ifndef MEMFLEET_STORAGE_POSTGRES_PG_CONNECTION_H_
#define MEMFLEET_STORAGE_POSTGRES_PG_CONNECTION_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// libpq's handles, declared here so that only pg_connection.cc includes libpq-fe.h.
typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;

namespace memfleet::storage {

// One statement parameter: text (numbers in decimal), bytes (sent in binary, for BYTEA) or NULL.
struct PgParam {
  std::optional<std::string> value;
  bool binary = false;

  static PgParam Text(std::string_view text) { return {std::string(text), false}; }
  static PgParam Bytes(std::string_view bytes) { return {std::string(bytes), true}; }
  static PgParam Int(int64_t v);
  // nullopt sends NULL: an unknown figure stays unknown in the database.
  static PgParam OptionalInt(std::optional<int64_t> v);
  // "" sends NULL (a column where NULL, not '', means "unknown").
  static PgParam TextOrNull(const std::string& text);
};

class PgResult;

// One row of a PgResult, with the accessors of sqlite_db.h's Statement, so that store_rows.h's readers
// serve both backends. Column indexes start at 0.
class PgRow {
 public:
  PgRow(const PGresult* result, int row) : result_(result), row_(row) {}
  int ColumnCount() const;
  bool ColumnIsNull(int index) const;
  int64_t ColumnInt64(int index) const;  // 0 for NULL or a value that is not an integer
  std::optional<int64_t> ColumnOptionalInt64(int index) const;
  std::string ColumnText(int index) const;  // "" for NULL
  std::string ColumnBlob(int index) const;  // a BYTEA column's bytes; "" for NULL

 private:
  const PGresult* result_;
  int row_;
};

class PgResult {
 public:
  PgResult() = default;
  explicit PgResult(PGresult* result) : result_(result) {}
  PgResult(PgResult&& other) noexcept;
  PgResult& operator=(PgResult&& other) noexcept;
  PgResult(const PgResult&) = delete;
  PgResult& operator=(const PgResult&) = delete;
  ~PgResult();

  int RowCount() const;
  PgRow Row(int row) const { return PgRow(result_, row); }
  // Rows an INSERT/UPDATE/DELETE changed (for INSERT ... ON CONFLICT DO NOTHING: 0 on a conflict).
  int64_t AffectedRows() const;
  // "INSERT 0 1", "COMMIT", "ROLLBACK", ...
  std::string CommandTag() const;

 private:
  PGresult* result_ = nullptr;
};

class PgConnection {
 public:
  // `uri`: a libpq connection URI (postgresql://USER@HOST:PORT/DB?...). Unavailable when the server
  // cannot be reached, with libpq's reason.
  static absl::StatusOr<PgConnection> Connect(const std::string& uri);

  PgConnection() = default;
  PgConnection(PgConnection&& other) noexcept;
  PgConnection& operator=(PgConnection&& other) noexcept;
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;
  ~PgConnection();

  // Runs one or more ';'-separated statements that take no parameters (DDL, BEGIN/COMMIT).
  absl::Status Exec(std::string_view sql);
  // One statement with its parameters; its rows (text format, BYTEA as bytes through PgRow::ColumnBlob).
  absl::StatusOr<PgResult> Query(std::string_view sql, const std::vector<PgParam>& params);
  // Query for a statement run again and again (ingest's inserts): the server parses and plans `sql` once
  // per connection, as a named prepared statement, and reuses that plan after, where Query has it parse,
  // analyze and plan the text every time. For fixed SQL text only: each distinct text is kept until the
  // connection closes (past kMaxPreparedStatements, the rest run as Query does).
  absl::StatusOr<PgResult> QueryPrepared(std::string_view sql, const std::vector<PgParam>& params);

  static constexpr size_t kMaxPreparedStatements = 64;

  bool is_open() const { return conn_ != nullptr; }

 private:
  explicit PgConnection(PGconn* conn) : conn_(conn) {}
  // A connection the server dropped (a restart, a failover) is reconnected before the next statement;
  // a statement that was running when it dropped has failed with Unavailable already.
  absl::Status EnsureConnected();
  // The name of `sql`'s prepared statement on this connection, preparing it first if it is new; "" when
  // the cache is full.
  absl::StatusOr<std::string> PreparedName(std::string_view sql);
  PGconn* conn_ = nullptr;
  // SQL text -> its prepared statement's name; cleared when the connection is reset (a new session has none).
  std::map<std::string, std::string, std::less<>> prepared_;
};

// BEGIN ... COMMIT on a connection; rolls back on destruction unless committed.
class PgTransaction {
 public:
  static absl::StatusOr<PgTransaction> Begin(PgConnection& db);

  PgTransaction(PgTransaction&& other) noexcept;
  PgTransaction& operator=(PgTransaction&&) = delete;
  PgTransaction(const PgTransaction&) = delete;
  PgTransaction& operator=(const PgTransaction&) = delete;
  ~PgTransaction();

  // The data is durable once this returns OK (synchronous_commit, PostgreSQL's default).
  absl::Status Commit();
  void Rollback();

 private:
  explicit PgTransaction(PgConnection* db) : db_(db) {}
  PgConnection* db_ = nullptr;
};

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_POSTGRES_PG_CONNECTION_H_
