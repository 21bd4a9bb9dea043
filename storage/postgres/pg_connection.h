// PgConnection: one libpq connection to PostgreSQL as the store's SqlConnection (sql_connection.h). The
// store's ?N parameters are rewritten to $N once per statement text, each statement is prepared once per
// connection (named, parsed and planned by the server once), and statements the caller does not wait for
// (Send, and the BEGIN of a transaction) go to the server with the next one it does wait for, in one round
// trip (libpq's pipeline mode). Every failure is a Status carrying the server's message, its SQLSTATE and
// the first words of the SQL. No exceptions.
//
//   MEMFLEET_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> db,
//   PgConnection::Connect("postgresql://memfleet@db:5432/memfleet")); MEMFLEET_ASSIGN_OR_RETURN(auto models,
//   QueryAll(*db, "SELECT model FROM devices WHERE device_id = ?1",
//                                                   {SqlValue::Text(id)}, [](const SqlRow& r) { return r.ColumnText(0);
//                                                   }));
//
// A connection the server dropped (a restart, a failover) is reconnected before the next statement; the
// statement that was running, or the transaction it was in, has failed with Unavailable.
// Threads: one thread at a time, as libpq requires.
#ifndef MEMFLEET_STORAGE_POSTGRES_PG_CONNECTION_H_
#define MEMFLEET_STORAGE_POSTGRES_PG_CONNECTION_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/sql_connection.h"

// libpq's handle, declared here so that only pg_connection.cc includes libpq-fe.h.
typedef struct pg_conn PGconn;

namespace memfleet::storage {

// `sql` with each ?N outside quotes written $N, as PostgreSQL numbers parameters.
std::string PostgresPlaceholders(std::string_view sql);

class PgConnection : public SqlConnection {
 public:
  // `uri`: a libpq connection URI (postgresql://USER@HOST:PORT/DB?...). Unavailable when the server
  // cannot be reached, with libpq's reason.
  static absl::StatusOr<std::unique_ptr<PgConnection>> Connect(const std::string& uri);

  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;
  ~PgConnection() override;

  SqlDialect dialect() const override { return SqlDialect::kPostgres; }
  absl::Status Exec(std::string_view sql) override;
  absl::StatusOr<int64_t> Query(std::string_view sql, SqlParams params, const SqlRowFn& on_row) override;
  absl::Status Send(std::string_view sql, SqlParams params, SqlRowFn on_row, int64_t* changed) override;
  absl::Status Flush() override;
  absl::Status Begin(SqlTransactionKind kind) override;
  absl::Status Commit() override;
  void Rollback() override;

  // What this connection cost the server so far: round trips (each a wait for the server's answer: a
  // pipeline of queued statements, an Exec, a ROLLBACK) and the statements in them (a prepare counts as
  // one). What a capture's transaction costs is read from these.
  uint64_t round_trips() const { return round_trips_; }
  uint64_t statements() const { return statements_; }
  // The same, summed over every connection of this process since it started; for a benchmark, whose
  // store's connections are out of its reach.
  static uint64_t ProcessRoundTrips() { return process_round_trips_.load(std::memory_order_relaxed); }
  static uint64_t ProcessStatements() { return process_statements_.load(std::memory_order_relaxed); }

  // Statements kept prepared; past it, a statement is sent with its text each time.
  static constexpr size_t kMaxPreparedStatements = 256;
  // Queued statements sent in one round trip at the most: the server's answers to them must fit the
  // socket's buffers, as this side reads them only once all are sent.
  static constexpr size_t kMaxQueued = 512;

 private:
  struct Pending {
    std::string sql;
    SqlParams params;
    SqlRowFn on_row;
    int64_t* changed = nullptr;
    std::string* command_tag = nullptr;
  };
  struct PreparedStatement {
    std::string name;      // "" until prepared on the server
    std::string postgres;  // the text with $N placeholders
    // 1 once its description showed only columns ResultRow reads in binary (integers, booleans, text,
    // BYTEA): its rows then come in binary, without the hex of a BYTEA (twice its bytes, and decoding).
    int result_format = 0;
  };

  explicit PgConnection(PGconn* conn) : conn_(conn) {}
  absl::Status EnsureConnected();
  // Queues `sql`; `on_row`, `changed`, `command_tag` (may be empty) receive its answer when it is sent.
  void Queue(std::string_view sql, SqlParams params, SqlRowFn on_row, int64_t* changed, std::string* command_tag);

  // Counts a wait for the server's answer to `statements` statements.
  void CountRoundTrip(uint64_t statements);

  // After a send failed part way: the connection's state is unknown, so it starts a new session.
  void Reset();

  PGconn* conn_ = nullptr;
  std::map<std::string, PreparedStatement, std::less<>> prepared_;
  uint64_t statements_named_ = 0;
  std::vector<Pending> queue_;
  bool in_transaction_ = false;
  bool begin_sent_ = false;  // the transaction's BEGIN has gone to the server
  uint64_t round_trips_ = 0;
  uint64_t statements_ = 0;
  static std::atomic<uint64_t> process_round_trips_;
  static std::atomic<uint64_t> process_statements_;
};

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_POSTGRES_PG_CONNECTION_H_
