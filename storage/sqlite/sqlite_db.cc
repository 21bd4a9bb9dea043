#include "storage/sqlite/sqlite_db.h"

#include <cctype>
#include <climits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace memfleet::storage {
namespace {

absl::StatusCode CodeFor(int rc) {
  switch (rc & 0xff) {
    case SQLITE_FULL:
    case SQLITE_NOMEM:
      return absl::StatusCode::kResourceExhausted;
    case SQLITE_READONLY:
      return absl::StatusCode::kFailedPrecondition;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_IOERR:
    case SQLITE_PROTOCOL:
      return absl::StatusCode::kUnavailable;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::StatusCode::kDataLoss;
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return absl::StatusCode::kPermissionDenied;
    case SQLITE_CANTOPEN:
      return absl::StatusCode::kNotFound;
    case SQLITE_CONSTRAINT:
      if (rc == SQLITE_CONSTRAINT_PRIMARYKEY || rc == SQLITE_CONSTRAINT_UNIQUE) {
        return absl::StatusCode::kAlreadyExists;
      }
      if (rc == SQLITE_CONSTRAINT_FOREIGNKEY) return absl::StatusCode::kFailedPrecondition;
      return absl::StatusCode::kInvalidArgument;
    case SQLITE_TOOBIG:
    case SQLITE_RANGE:
    case SQLITE_MISMATCH:
      return absl::StatusCode::kInvalidArgument;
    default:
      return absl::StatusCode::kInternal;
  }
}

}  // namespace

absl::Status SqliteStatus(int rc, sqlite3* db, std::string_view sql) {
  std::string detail = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  std::string message = absl::StrCat("SQLite error ", rc, " (", sqlite3_errstr(rc), "): ", detail);
  if (!sql.empty()) absl::StrAppend(&message, " [in \"", SqlFirstWords(sql), "\"]");
  return absl::Status(CodeFor(rc), message);
}

// ---- SqliteDb ----

absl::StatusOr<SqliteDb> SqliteDb::Open(const std::string& path, int flags) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  SqliteDb db(raw);  // owns `raw` even on failure: SQLite allocates a handle to carry the message
  if (rc != SQLITE_OK) {
    absl::Status s = SqliteStatus(rc, raw, "");
    return absl::Status(s.code(), absl::StrCat("cannot open database \"", path, "\": ", s.message()));
  }
  sqlite3_extended_result_codes(raw, 1);
  return db;
}

SqliteDb::SqliteDb(SqliteDb&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}

SqliteDb& SqliteDb::operator=(SqliteDb&& other) noexcept {
  if (this != &other) {
    if (db_ != nullptr) sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
  }
  return *this;
}

SqliteDb::~SqliteDb() {
  // close_v2 defers the close until leaked statements are finalized instead of failing with BUSY.
  if (db_ != nullptr) sqlite3_close_v2(db_);
}

absl::Status SqliteDb::Exec(std::string_view sql) {
  if (db_ == nullptr) return absl::FailedPreconditionError("database is not open");
  std::string text(sql);
  char* error = nullptr;
  int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &error);
  if (rc == SQLITE_OK) return absl::OkStatus();
  std::string detail = error != nullptr ? error : sqlite3_errmsg(db_);
  sqlite3_free(error);
  std::string message =
      absl::StrCat("SQLite error ", rc, " (", sqlite3_errstr(rc), "): ", detail, " [in \"", SqlFirstWords(sql), "\"]");
  return absl::Status(CodeFor(rc), message);
}

absl::StatusOr<Statement> SqliteDb::Prepare(std::string_view sql) {
  if (db_ == nullptr) return absl::FailedPreconditionError("database is not open");
  if (sql.size() > static_cast<size_t>(INT_MAX)) return absl::InvalidArgumentError("SQL text too long");
  sqlite3_stmt* stmt = nullptr;
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, &tail);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return SqliteStatus(rc, db_, sql);
  }
  if (stmt == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("no SQL statement in \"", SqlFirstWords(sql), "\""));
  }
  Statement result(db_, stmt, std::string(sql));
  if (tail != nullptr) {
    std::string_view rest(tail, static_cast<size_t>(sql.data() + sql.size() - tail));
    for (char c : rest) {
      if (!std::isspace(static_cast<unsigned char>(c)) && c != ';') {
        return absl::InvalidArgumentError(
            absl::StrCat("more than one SQL statement in \"", SqlFirstWords(sql), "\"; use Exec"));
      }
    }
  }
  return result;
}

absl::Status SqliteDb::CopyTo(const std::string& path) {
  if (db_ == nullptr) return absl::FailedPreconditionError("database is not open");
  MEMFLEET_ASSIGN_OR_RETURN(SqliteDb to, Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE));
  sqlite3_backup* backup = sqlite3_backup_init(to.db_, "main", db_, "main");
  if (backup == nullptr) return SqliteStatus(sqlite3_errcode(to.db_), to.db_, "backup");
  const int stepped = sqlite3_backup_step(backup, -1);  // every page at once
  const int finished = sqlite3_backup_finish(backup);
  if (stepped != SQLITE_DONE) return SqliteStatus(stepped, to.db_, "backup");
  if (finished != SQLITE_OK) return SqliteStatus(finished, to.db_, "backup");
  return absl::OkStatus();
}

int64_t SqliteDb::Changes() const { return db_ != nullptr ? sqlite3_changes(db_) : 0; }

bool SqliteDb::InTransaction() const { return db_ != nullptr && sqlite3_get_autocommit(db_) == 0; }

bool SqliteDb::IsReadOnly() const { return db_ != nullptr && sqlite3_db_readonly(db_, "main") == 1; }

// ---- Statement ----

Statement::Statement(Statement&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), stmt_(std::exchange(other.stmt_, nullptr)), sql_(std::move(other.sql_)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    if (stmt_ != nullptr) sqlite3_finalize(stmt_);
    db_ = std::exchange(other.db_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
    sql_ = std::move(other.sql_);
  }
  return *this;
}

Statement::~Statement() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

absl::Status Statement::BindResult(int rc, int index) const {
  if (rc == SQLITE_OK) return absl::OkStatus();
  absl::Status s = SqliteStatus(rc, db_, sql_);
  return absl::Status(s.code(), absl::StrCat("binding parameter ", index, ": ", s.message()));
}

absl::Status Statement::BindInt64(int index, int64_t value) {
  if (stmt_ == nullptr) return absl::FailedPreconditionError("statement is not prepared");
  return BindResult(sqlite3_bind_int64(stmt_, index, value), index);
}

absl::Status Statement::BindText(int index, std::string_view value) {
  if (stmt_ == nullptr) return absl::FailedPreconditionError("statement is not prepared");
  // The 64-bit variant so a huge value is SQLITE_TOOBIG instead of an int overflow.
  return BindResult(sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
                    index);
}

absl::Status Statement::BindBlob(int index, std::string_view bytes) {
  if (stmt_ == nullptr) return absl::FailedPreconditionError("statement is not prepared");
  // A null pointer would bind NULL, not an empty blob; an empty blob is still a value.
  static const char kEmpty = 0;
  const void* data = bytes.empty() ? static_cast<const void*>(&kEmpty) : bytes.data();
  return BindResult(sqlite3_bind_blob64(stmt_, index, data, bytes.size(), SQLITE_TRANSIENT), index);
}

absl::Status Statement::BindNull(int index) {
  if (stmt_ == nullptr) return absl::FailedPreconditionError("statement is not prepared");
  return BindResult(sqlite3_bind_null(stmt_, index), index);
}

absl::Status Statement::BindOptionalInt64(int index, std::optional<int64_t> value) {
  return value.has_value() ? BindInt64(index, *value) : BindNull(index);
}

absl::StatusOr<StepResult> Statement::Step() {
  if (stmt_ == nullptr) return absl::FailedPreconditionError("statement is not prepared");
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return StepResult::kRow;
  if (rc == SQLITE_DONE) return StepResult::kDone;
  return SqliteStatus(rc, db_, sql_);
}

absl::Status Statement::StepDone() {
  absl::StatusOr<StepResult> r = Step();
  if (!r.ok()) return r.status();
  if (*r != StepResult::kDone) {
    return absl::InternalError(
        absl::StrCat("statement returned a row where none was expected [in \"", SqlFirstWords(sql_), "\"]"));
  }
  return absl::OkStatus();
}

bool Statement::ReadsOnly() const { return stmt_ == nullptr || sqlite3_stmt_readonly(stmt_) != 0; }

int Statement::ColumnCount() const { return stmt_ != nullptr ? sqlite3_column_count(stmt_) : 0; }

bool Statement::ColumnIsNull(int index) const {
  return stmt_ == nullptr || sqlite3_column_type(stmt_, index) == SQLITE_NULL;
}

int64_t Statement::ColumnInt64(int index) const { return stmt_ != nullptr ? sqlite3_column_int64(stmt_, index) : 0; }

std::optional<int64_t> Statement::ColumnOptionalInt64(int index) const {
  if (ColumnIsNull(index)) return std::nullopt;
  return sqlite3_column_int64(stmt_, index);
}

std::string Statement::ColumnText(int index) const {
  if (stmt_ == nullptr) return "";
  const unsigned char* text = sqlite3_column_text(stmt_, index);
  if (text == nullptr) return "";
  int size = sqlite3_column_bytes(stmt_, index);  // after column_text, as the SQLite docs require
  return std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(size));
}

std::string Statement::ColumnBlob(int index) const {
  if (stmt_ == nullptr) return "";
  const void* data = sqlite3_column_blob(stmt_, index);
  int size = sqlite3_column_bytes(stmt_, index);
  if (data == nullptr || size <= 0) return "";
  return std::string(static_cast<const char*>(data), static_cast<size_t>(size));
}

void Statement::Reset() {
  if (stmt_ == nullptr) return;
  // reset returns the last step's error, which Step() already reported.
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

// ---- Transaction ----

absl::StatusOr<Transaction> Transaction::Begin(SqliteDb& db, bool immediate) {
  absl::Status s = db.Exec(immediate ? "BEGIN IMMEDIATE" : "BEGIN");
  if (!s.ok()) return s;
  return Transaction(&db);
}

Transaction::Transaction(Transaction&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}

Transaction::~Transaction() { Rollback(); }

absl::Status Transaction::Commit() {
  if (db_ == nullptr) return absl::FailedPreconditionError("transaction already finished");
  if (!db_->InTransaction()) {
    db_ = nullptr;
    return absl::AbortedError("transaction was rolled back by SQLite after an earlier error");
  }
  absl::Status s = db_->Exec("COMMIT");
  if (!s.ok()) {
    Rollback();
    return s;
  }
  db_ = nullptr;
  return absl::OkStatus();
}

void Transaction::Rollback() {
  if (db_ == nullptr) return;
  // After SQLITE_FULL/IOERR/NOMEM SQLite may already have rolled back; a second ROLLBACK would fail.
  if (db_->InTransaction()) db_->Exec("ROLLBACK").IgnoreError();
  db_ = nullptr;
}

// ---- EXPLAIN QUERY PLAN ----

absl::StatusOr<std::vector<std::string>> ExplainQueryPlan(SqliteDb& db, std::string_view sql) {
  absl::StatusOr<Statement> st = db.Prepare(absl::StrCat("EXPLAIN QUERY PLAN ", std::string(sql)));
  if (!st.ok()) return st.status();
  // Columns: id, parent, notused, detail.
  std::vector<std::string> details;
  while (true) {
    absl::StatusOr<StepResult> r = st->Step();
    if (!r.ok()) return r.status();
    if (*r == StepResult::kDone) break;
    details.push_back(st->ColumnText(3));
  }
  return details;
}

}  // namespace memfleet::storage
