#include "storage/postgres/pg_connection.h"

#include <libpq-fe.h>

#include <string_view>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "storage/sql_connection.h"  // SqlFirstWords

namespace memfleet::storage {
namespace {

// SQLSTATE (PostgreSQL's appendix "Error Codes") -> Status code, in the spirit of SqliteStatus.
absl::StatusCode CodeFor(std::string_view sqlstate) {
  if (sqlstate == "23505") return absl::StatusCode::kAlreadyExists;       // unique_violation
  if (sqlstate == "23503") return absl::StatusCode::kFailedPrecondition;  // foreign_key_violation
  if (sqlstate == "25006") return absl::StatusCode::kFailedPrecondition;  // read_only_sql_transaction
  if (sqlstate == "3D000") return absl::StatusCode::kNotFound;            // invalid_catalog_name
  if (sqlstate == "42501") return absl::StatusCode::kPermissionDenied;    // insufficient_privilege
  if (sqlstate == "40001" || sqlstate == "40P01") return absl::StatusCode::kAborted;  // serialization, deadlock
  const std::string_view cls = sqlstate.substr(0, 2);
  if (cls == "23" || cls == "22") return absl::StatusCode::kInvalidArgument;  // other constraints, bad data
  if (cls == "53") return absl::StatusCode::kResourceExhausted;                // disk full, out of memory
  if (cls == "08" || cls == "57") return absl::StatusCode::kUnavailable;       // connection, shutdown
  if (cls == "28") return absl::StatusCode::kPermissionDenied;                 // authentication
  return absl::StatusCode::kInternal;
}

std::string ConnectionMessage(const PGconn* conn) {
  std::string message = conn != nullptr ? PQerrorMessage(conn) : "out of memory";
  return std::string(absl::StripTrailingAsciiWhitespace(message));
}

// The status of a finished statement: OK for a command or rows, else the server's message.
absl::Status ResultStatus(const PGresult* result, const PGconn* conn, std::string_view sql) {
  if (result == nullptr) {
    return absl::UnavailableError(absl::StrCat("PostgreSQL: ", ConnectionMessage(conn), " (", SqlFirstWords(sql), ")"));
  }
  const ExecStatusType status = PQresultStatus(result);
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return absl::OkStatus();
  const char* sqlstate = PQresultErrorField(result, PG_DIAG_SQLSTATE);
  const char* primary = PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY);
  const char* detail = PQresultErrorField(result, PG_DIAG_MESSAGE_DETAIL);
  // No SQLSTATE: libpq's own failure (the connection broke mid-statement).
  const absl::StatusCode code = sqlstate != nullptr ? CodeFor(sqlstate) : absl::StatusCode::kUnavailable;
  std::string message = primary != nullptr ? primary : ConnectionMessage(conn);
  if (detail != nullptr) absl::StrAppend(&message, " (", detail, ")");
  return absl::Status(code, absl::StrCat("PostgreSQL: ", message, " [", sqlstate != nullptr ? sqlstate : "no SQLSTATE",
                                         "] in \"", SqlFirstWords(sql), "\""));
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

PgParam PgParam::Int(int64_t v) { return {absl::StrCat(v), false}; }

PgParam PgParam::OptionalInt(std::optional<int64_t> v) {
  return v.has_value() ? Int(*v) : PgParam{std::nullopt, false};
}

PgParam PgParam::TextOrNull(const std::string& text) {
  return text.empty() ? PgParam{std::nullopt, false} : Text(text);
}

// ---- rows ----

int PgRow::ColumnCount() const { return PQnfields(result_); }

bool PgRow::ColumnIsNull(int index) const { return PQgetisnull(result_, row_, index) != 0; }

int64_t PgRow::ColumnInt64(int index) const { return ColumnOptionalInt64(index).value_or(0); }

std::optional<int64_t> PgRow::ColumnOptionalInt64(int index) const {
  if (ColumnIsNull(index)) return std::nullopt;
  int64_t v = 0;
  if (!absl::SimpleAtoi(PQgetvalue(result_, row_, index), &v)) return std::nullopt;
  return v;
}

std::string PgRow::ColumnText(int index) const {
  if (ColumnIsNull(index)) return std::string();
  return std::string(PQgetvalue(result_, row_, index), static_cast<size_t>(PQgetlength(result_, row_, index)));
}

// BYTEA in text format is "\x" and two hex digits a byte (bytea_output = hex, set at connect).
std::string PgRow::ColumnBlob(int index) const {
  const std::string_view text(PQgetvalue(result_, row_, index), static_cast<size_t>(PQgetlength(result_, row_, index)));
  if (ColumnIsNull(index) || text.size() < 2 || text.substr(0, 2) != "\\x") return std::string();
  std::string bytes;
  bytes.reserve((text.size() - 2) / 2);
  for (size_t i = 2; i + 1 < text.size(); i += 2) {
    const int hi = HexDigit(text[i]);
    const int lo = HexDigit(text[i + 1]);
    if (hi < 0 || lo < 0) return std::string();
    bytes.push_back(static_cast<char>(hi * 16 + lo));
  }
  return bytes;
}

PgResult::PgResult(PgResult&& other) noexcept : result_(std::exchange(other.result_, nullptr)) {}

PgResult& PgResult::operator=(PgResult&& other) noexcept {
  if (this != &other) {
    if (result_ != nullptr) PQclear(result_);
    result_ = std::exchange(other.result_, nullptr);
  }
  return *this;
}

PgResult::~PgResult() {
  if (result_ != nullptr) PQclear(result_);
}

int PgResult::RowCount() const { return result_ != nullptr ? PQntuples(result_) : 0; }

std::string PgResult::CommandTag() const { return result_ != nullptr ? PQcmdStatus(result_) : ""; }

int64_t PgResult::AffectedRows() const {
  int64_t n = 0;
  if (result_ == nullptr || !absl::SimpleAtoi(PQcmdTuples(result_), &n)) return 0;
  return n;
}

// ---- connection ----

absl::StatusOr<PgConnection> PgConnection::Connect(const std::string& uri) {
  PgConnection db(PQconnectdb(uri.c_str()));
  if (db.conn_ == nullptr || PQstatus(db.conn_) != CONNECTION_OK) {
    return absl::UnavailableError(absl::StrCat("cannot connect to PostgreSQL: ", ConnectionMessage(db.conn_)));
  }
  // Fixed session settings the store's SQL relies on: UTC, hex BYTEA, and no notices on stderr.
  if (absl::Status s = db.Exec("SET TIME ZONE 'UTC'; SET bytea_output = 'hex'; SET client_min_messages = warning");
      !s.ok()) {
    return s;
  }
  return db;
}

PgConnection::PgConnection(PgConnection&& other) noexcept
    : conn_(std::exchange(other.conn_, nullptr)), prepared_(std::exchange(other.prepared_, {})) {}

PgConnection& PgConnection::operator=(PgConnection&& other) noexcept {
  if (this != &other) {
    if (conn_ != nullptr) PQfinish(conn_);
    conn_ = std::exchange(other.conn_, nullptr);
    prepared_ = std::exchange(other.prepared_, {});
  }
  return *this;
}

PgConnection::~PgConnection() {
  if (conn_ != nullptr) PQfinish(conn_);
}

absl::Status PgConnection::EnsureConnected() {
  if (conn_ == nullptr) return absl::FailedPreconditionError("PostgreSQL connection is not open");
  if (PQstatus(conn_) == CONNECTION_OK) return absl::OkStatus();
  PQreset(conn_);
  prepared_.clear();  // the new session has none of the old one's prepared statements
  if (PQstatus(conn_) != CONNECTION_OK) {
    return absl::UnavailableError(absl::StrCat("lost the PostgreSQL connection: ", ConnectionMessage(conn_)));
  }
  return Exec("SET TIME ZONE 'UTC'; SET bytea_output = 'hex'; SET client_min_messages = warning");
}

absl::Status PgConnection::Exec(std::string_view sql) {
  if (absl::Status s = EnsureConnected(); !s.ok()) return s;
  PGresult* raw = PQexec(conn_, std::string(sql).c_str());
  PgResult result(raw);
  return ResultStatus(raw, conn_, sql);
}

namespace {

// A statement's parameters as libpq's parallel arrays; points into `params`, which must outlive it.
struct ParamArrays {
  explicit ParamArrays(const std::vector<PgParam>& params) {
    values.reserve(params.size());
    lengths.reserve(params.size());
    formats.reserve(params.size());
    for (const PgParam& p : params) {
      values.push_back(p.value.has_value() ? p.value->data() : nullptr);
      lengths.push_back(p.value.has_value() ? static_cast<int>(p.value->size()) : 0);
      formats.push_back(p.binary ? 1 : 0);
    }
  }
  int count() const { return static_cast<int>(values.size()); }
  std::vector<const char*> values;
  std::vector<int> lengths;
  std::vector<int> formats;
};

}  // namespace

absl::StatusOr<PgResult> PgConnection::Query(std::string_view sql, const std::vector<PgParam>& params) {
  if (absl::Status s = EnsureConnected(); !s.ok()) return s;
  const ParamArrays p(params);
  PGresult* raw = PQexecParams(conn_, std::string(sql).c_str(), p.count(), /*paramTypes=*/nullptr, p.values.data(),
                               p.lengths.data(), p.formats.data(), /*resultFormat=*/0);
  PgResult result(raw);
  if (absl::Status s = ResultStatus(raw, conn_, sql); !s.ok()) return s;
  return result;
}

absl::StatusOr<std::string> PgConnection::PreparedName(std::string_view sql) {
  if (auto it = prepared_.find(sql); it != prepared_.end()) return it->second;
  if (prepared_.size() >= kMaxPreparedStatements) return std::string();
  std::string name = absl::StrCat("memfleet_", prepared_.size());
  // Parameter types as Query leaves them: inferred by the server from where each $N is used.
  PGresult* raw = PQprepare(conn_, name.c_str(), std::string(sql).c_str(), 0, /*paramTypes=*/nullptr);
  PgResult prepared(raw);
  if (absl::Status s = ResultStatus(raw, conn_, sql); !s.ok()) return s;
  prepared_.emplace(std::string(sql), name);
  return name;
}

absl::StatusOr<PgResult> PgConnection::QueryPrepared(std::string_view sql, const std::vector<PgParam>& params) {
  if (absl::Status s = EnsureConnected(); !s.ok()) return s;
  absl::StatusOr<std::string> name = PreparedName(sql);
  if (!name.ok()) return name.status();
  if (name->empty()) return Query(sql, params);
  const ParamArrays p(params);
  PGresult* raw = PQexecPrepared(conn_, name->c_str(), p.count(), p.values.data(), p.lengths.data(), p.formats.data(),
                                 /*resultFormat=*/0);
  PgResult result(raw);
  if (absl::Status s = ResultStatus(raw, conn_, sql); !s.ok()) return s;
  return result;
}

// ---- transactions ----

absl::StatusOr<PgTransaction> PgTransaction::Begin(PgConnection& db) {
  if (absl::Status s = db.Exec("BEGIN"); !s.ok()) return s;
  return PgTransaction(&db);
}

PgTransaction::PgTransaction(PgTransaction&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}

PgTransaction::~PgTransaction() { Rollback(); }

absl::Status PgTransaction::Commit() {
  if (db_ == nullptr) return absl::FailedPreconditionError("transaction already ended");
  PgConnection* db = std::exchange(db_, nullptr);
  absl::StatusOr<PgResult> result = db->Query("COMMIT", {});
  if (!result.ok()) return result.status();
  // COMMIT of a transaction that had failed answers ROLLBACK, not an error: nothing was stored.
  if (result->CommandTag() != "COMMIT") {
    return absl::AbortedError(absl::StrCat("PostgreSQL rolled the transaction back (", result->CommandTag(), ")"));
  }
  return absl::OkStatus();
}

void PgTransaction::Rollback() {
  if (db_ == nullptr) return;
  std::exchange(db_, nullptr)->Exec("ROLLBACK").IgnoreError();
}

}  // namespace memfleet::storage
