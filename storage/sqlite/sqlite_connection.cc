#include "storage/sqlite/sqlite_connection.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace memfleet::storage {
namespace {

// A row of a stepped statement, read through the statement's own accessors.
class StatementRow : public SqlRow {
 public:
  explicit StatementRow(const Statement& st) : st_(st) {}
  int ColumnCount() const override { return st_.ColumnCount(); }
  bool ColumnIsNull(int index) const override { return st_.ColumnIsNull(index); }
  int64_t ColumnInt64(int index) const override { return st_.ColumnInt64(index); }
  std::optional<int64_t> ColumnOptionalInt64(int index) const override { return st_.ColumnOptionalInt64(index); }
  std::string ColumnText(int index) const override { return st_.ColumnText(index); }
  std::string ColumnBlob(int index) const override { return st_.ColumnBlob(index); }

 private:
  const Statement& st_;
};

// Resets a statement at the end of a scope: one left mid-result would keep its read transaction open
// and pin an old WAL snapshot.
class ResetOnExit {
 public:
  explicit ResetOnExit(Statement* st) : st_(st) {}
  ResetOnExit(const ResetOnExit&) = delete;
  ResetOnExit& operator=(const ResetOnExit&) = delete;
  ~ResetOnExit() { st_->Reset(); }

 private:
  Statement* st_;
};

absl::Status Bind(Statement& st, int index, const SqlValue& value) {
  switch (value.kind()) {
    case SqlValue::Kind::kNull:
      return st.BindNull(index);
    case SqlValue::Kind::kInt:
      return st.BindInt64(index, value.int_value());
    case SqlValue::Kind::kText:
      return st.BindText(index, value.bytes());
    case SqlValue::Kind::kBlob:
      return st.BindBlob(index, value.bytes());
  }
  return absl::InternalError("unknown parameter kind");
}

}  // namespace

SqliteConnection::~SqliteConnection() = default;

absl::Status SqliteConnection::Exec(std::string_view sql) { return db_.Exec(sql); }

absl::StatusOr<Statement*> SqliteConnection::Prepared(std::string_view sql, Statement& one_use) {
  if (auto it = statements_.find(sql); it != statements_.end()) return it->second.get();
  MEMFLEET_ASSIGN_OR_RETURN(Statement st, db_.Prepare(sql));
  if (statements_.size() >= kMaxPreparedStatements) {
    one_use = std::move(st);
    return &one_use;
  }
  auto inserted = statements_.emplace(std::string(sql), std::make_unique<Statement>(std::move(st)));
  return inserted.first->second.get();
}

absl::StatusOr<int64_t> SqliteConnection::Query(std::string_view sql, SqlParams params, const SqlRowFn& on_row) {
  Statement one_use;
  MEMFLEET_ASSIGN_OR_RETURN(Statement * st, Prepared(sql, one_use));
  ResetOnExit reset(st);
  int index = 1;
  for (const SqlValue& value : params) MEMFLEET_RETURN_IF_ERROR(Bind(*st, index++, value));
  const StatementRow row(*st);
  // Stepped to the end even without a reader: RETURNING's rows come before the change is complete.
  while (true) {
    MEMFLEET_ASSIGN_OR_RETURN(StepResult r, st->Step());
    if (r == StepResult::kDone) break;
    if (on_row) on_row(row);
  }
  // The connection's count is of its last change, which a SELECT leaves as it was.
  return st->ReadsOnly() ? 0 : db_.Changes();
}

absl::Status SqliteConnection::Send(std::string_view sql, SqlParams params, SqlRowFn on_row, int64_t* changed) {
  absl::StatusOr<int64_t> n = Query(sql, std::move(params), on_row);
  if (!n.ok()) return n.status();
  if (changed != nullptr) *changed = *n;
  return absl::OkStatus();
}

absl::Status SqliteConnection::Begin(SqlTransactionKind kind) {
  // IMMEDIATE takes the write lock up front, so two writers never deadlock upgrading a read lock; a
  // snapshot is a deferred transaction, whose first read fixes what it sees.
  return db_.Exec(kind == SqlTransactionKind::kWrite ? "BEGIN IMMEDIATE" : "BEGIN");
}

absl::Status SqliteConnection::Commit() {
  if (!db_.InTransaction()) return absl::AbortedError("transaction was rolled back by SQLite after an earlier error");
  absl::Status s = db_.Exec("COMMIT");
  if (!s.ok()) Rollback();
  return s;
}

void SqliteConnection::Rollback() {
  // After SQLITE_FULL/IOERR/NOMEM SQLite may already have rolled back; a second ROLLBACK would fail.
  if (db_.InTransaction()) db_.Exec("ROLLBACK").IgnoreError();
}

}  // namespace memfleet::storage
