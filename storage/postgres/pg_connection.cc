#include "storage/postgres/pg_connection.h"

#include <libpq-fe.h>

#include <cctype>
#include <cstdint>
#include <string_view>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace memfleet::storage {
namespace {

// SQLSTATE (PostgreSQL's appendix "Error Codes") -> Status code, in the spirit of SqliteStatus.
absl::StatusCode CodeFor(std::string_view sqlstate) {
  if (sqlstate == "23505") return absl::StatusCode::kAlreadyExists;                   // unique_violation
  if (sqlstate == "23503") return absl::StatusCode::kFailedPrecondition;              // foreign_key_violation
  if (sqlstate == "25006") return absl::StatusCode::kFailedPrecondition;              // read_only_sql_transaction
  if (sqlstate == "3D000") return absl::StatusCode::kNotFound;                        // invalid_catalog_name
  if (sqlstate == "42501") return absl::StatusCode::kPermissionDenied;                // insufficient_privilege
  if (sqlstate == "40001" || sqlstate == "40P01") return absl::StatusCode::kAborted;  // serialization, deadlock
  const std::string_view cls = sqlstate.substr(0, 2);
  if (cls == "23" || cls == "22") return absl::StatusCode::kInvalidArgument;  // other constraints, bad data
  if (cls == "53") return absl::StatusCode::kResourceExhausted;               // disk full, out of memory
  if (cls == "08" || cls == "57") return absl::StatusCode::kUnavailable;      // connection, shutdown
  if (cls == "28") return absl::StatusCode::kPermissionDenied;                // authentication
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

// Each byte's value as a hex digit, -1 for a byte that is none: one load a digit, as a blob of a trend's
// reports is ~2 MB of hex a page (branching per digit was most of the client's time reading one).
struct HexDigitTable {
  constexpr HexDigitTable() : value() {
    for (int c = 0; c < 256; ++c) {
      value[c] = c >= '0' && c <= '9'   ? static_cast<int8_t>(c - '0')
                 : c >= 'a' && c <= 'f' ? static_cast<int8_t>(c - 'a' + 10)
                 : c >= 'A' && c <= 'F' ? static_cast<int8_t>(c - 'A' + 10)
                                        : static_cast<int8_t>(-1);
    }
  }
  int8_t value[256];
};
constexpr HexDigitTable kHexDigits;

int HexDigit(char c) { return kHexDigits.value[static_cast<unsigned char>(c)]; }

// The column types whose binary form ResultRow reads (pg_type's OIDs, fixed since PostgreSQL 7).
constexpr Oid kBoolOid = 16, kByteaOid = 17, kNameOid = 19, kInt8Oid = 20, kInt2Oid = 21, kInt4Oid = 23, kTextOid = 25,
              kBpcharOid = 1042, kVarcharOid = 1043;

bool IsIntegerType(Oid type) { return type == kInt8Oid || type == kInt4Oid || type == kInt2Oid; }

// Whether every column of a statement (its prepared description) can come in binary format.
bool BinaryReadable(const PGresult* description) {
  for (int i = 0; i < PQnfields(description); ++i) {
    const Oid type = PQftype(description, i);
    if (!IsIntegerType(type) && type != kBoolOid && type != kByteaOid && type != kNameOid && type != kTextOid &&
        type != kBpcharOid && type != kVarcharOid) {
      return false;
    }
  }
  return true;
}

// A big-endian two's complement integer of `v.size()` (2, 4 or 8) bytes.
int64_t BigEndianInt(std::string_view v) {
  uint64_t u = 0;
  for (char c : v) u = (u << 8) | static_cast<unsigned char>(c);
  const unsigned bits = static_cast<unsigned>(v.size() * 8);
  if (bits < 64 && (u >> (bits - 1)) != 0) u |= ~uint64_t{0} << bits;  // sign-extend
  return static_cast<int64_t>(u);
}

// A row of a result, each column in text format or (a statement whose columns BinaryReadable takes) in
// binary: text and BYTEA as their bytes, integers big-endian, a boolean one byte.
class ResultRow : public SqlRow {
 public:
  ResultRow(const PGresult* result, int row) : result_(result), row_(row) {}
  int ColumnCount() const override { return PQnfields(result_); }
  bool ColumnIsNull(int index) const override { return PQgetisnull(result_, row_, index) != 0; }
  int64_t ColumnInt64(int index) const override { return ColumnOptionalInt64(index).value_or(0); }
  std::optional<int64_t> ColumnOptionalInt64(int index) const override {
    if (ColumnIsNull(index)) return std::nullopt;
    const std::string_view text = Value(index);
    if (Binary(index)) {
      const Oid type = PQftype(result_, index);
      if (IsIntegerType(type) && (text.size() == 2 || text.size() == 4 || text.size() == 8)) {
        return BigEndianInt(text);
      }
      if (type == kBoolOid) return text.size() == 1 && text[0] != 0 ? 1 : 0;
    }
    if (text == "t") return 1;  // a boolean
    if (text == "f") return 0;
    int64_t v = 0;
    if (!absl::SimpleAtoi(absl::string_view(text.data(), text.size()), &v)) return std::nullopt;
    return v;
  }
  std::string ColumnText(int index) const override {
    if (ColumnIsNull(index)) return std::string();
    if (Binary(index)) {
      const Oid type = PQftype(result_, index);
      if (IsIntegerType(type)) return absl::StrCat(ColumnInt64(index));
      if (type == kBoolOid) return ColumnInt64(index) != 0 ? "t" : "f";
    }
    return std::string(Value(index));
  }
  // BYTEA in text format is "\x" and two hex digits a byte (bytea_output = hex, set at connect).
  std::string ColumnBlob(int index) const override {
    if (ColumnIsNull(index)) return std::string();
    const std::string_view text = Value(index);
    if (Binary(index)) return std::string(text);
    if (text.size() < 2 || text.substr(0, 2) != "\\x") return std::string();
    std::string bytes((text.size() - 2) / 2, '\0');
    const char* digit = text.data() + 2;
    int bad = 0;
    for (char& byte : bytes) {
      const int hi = HexDigit(digit[0]);
      const int lo = HexDigit(digit[1]);
      bad |= hi | lo;  // negative once any digit was not one
      byte = static_cast<char>((static_cast<unsigned>(hi) << 4) | static_cast<unsigned>(lo));
      digit += 2;
    }
    return bad < 0 ? std::string() : bytes;
  }

 private:
  bool Binary(int index) const { return PQfformat(result_, index) == 1; }
  std::string_view Value(int index) const {
    return std::string_view(PQgetvalue(result_, row_, index), static_cast<size_t>(PQgetlength(result_, row_, index)));
  }
  const PGresult* result_;
  int row_;
};

// Frees a PGresult at the end of a scope.
struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using ResultPtr = std::unique_ptr<PGresult, ResultDeleter>;

// A statement's parameters as libpq's parallel arrays; points into `params`, which must outlive it.
struct ParamArrays {
  explicit ParamArrays(const SqlParams& params) {
    text.reserve(params.size());
    for (const SqlValue& p : params) {
      // Integers go as decimal text: libpq's binary format would need the parameter's type given.
      text.push_back(p.kind() == SqlValue::Kind::kInt ? absl::StrCat(p.int_value()) : std::string());
    }
    for (size_t i = 0; i < params.size(); ++i) {
      const SqlValue& p = params[i];
      const bool null = p.kind() == SqlValue::Kind::kNull;
      const std::string& bytes = p.kind() == SqlValue::Kind::kInt ? text[i] : p.bytes();
      values.push_back(null ? nullptr : bytes.data());
      lengths.push_back(null ? 0 : static_cast<int>(bytes.size()));
      formats.push_back(p.kind() == SqlValue::Kind::kBlob ? 1 : 0);
    }
  }
  int count() const { return static_cast<int>(values.size()); }
  std::vector<std::string> text;
  std::vector<const char*> values;
  std::vector<int> lengths;
  std::vector<int> formats;
};

constexpr char kSessionSettings[] = "SET TIME ZONE 'UTC'; SET bytea_output = 'hex'; SET client_min_messages = warning";

}  // namespace

std::string PostgresPlaceholders(std::string_view sql) {
  std::string out;
  out.reserve(sql.size());
  char quote = 0;  // inside '...' or "..."
  for (size_t i = 0; i < sql.size(); ++i) {
    const char c = sql[i];
    if (quote != 0) {
      if (c == quote) quote = 0;  // a doubled quote closes and reopens: the same text
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '?' && i + 1 < sql.size() && std::isdigit(static_cast<unsigned char>(sql[i + 1]))) {
      out.push_back('$');
      continue;
    }
    out.push_back(c);
  }
  return out;
}

// ---- connecting ----

std::atomic<uint64_t> PgConnection::process_round_trips_{0};
std::atomic<uint64_t> PgConnection::process_statements_{0};

void PgConnection::CountRoundTrip(uint64_t statements) {
  ++round_trips_;
  statements_ += statements;
  process_round_trips_.fetch_add(1, std::memory_order_relaxed);
  process_statements_.fetch_add(statements, std::memory_order_relaxed);
}

absl::StatusOr<std::unique_ptr<PgConnection>> PgConnection::Connect(const std::string& uri) {
  std::unique_ptr<PgConnection> db(new PgConnection(PQconnectdb(uri.c_str())));
  if (db->conn_ == nullptr || PQstatus(db->conn_) != CONNECTION_OK) {
    return absl::UnavailableError(absl::StrCat("cannot connect to PostgreSQL: ", ConnectionMessage(db->conn_)));
  }
  // Fixed session settings the store's SQL relies on: UTC, hex BYTEA, and no notices on stderr.
  if (absl::Status s = db->Exec(kSessionSettings); !s.ok()) return s;
  return db;
}

PgConnection::~PgConnection() {
  if (conn_ != nullptr) PQfinish(conn_);
}

absl::Status PgConnection::EnsureConnected() {
  if (conn_ == nullptr) return absl::FailedPreconditionError("PostgreSQL connection is not open");
  if (PQstatus(conn_) == CONNECTION_OK) return absl::OkStatus();
  // A transaction whose BEGIN is still queued has not started: it starts on the new session.
  const bool lost_transaction = in_transaction_ && begin_sent_;
  PQreset(conn_);
  prepared_.clear();  // the new session has none of the old one's prepared statements
  if (lost_transaction) in_transaction_ = false;
  begin_sent_ = false;
  if (PQstatus(conn_) != CONNECTION_OK) {
    queue_.clear();
    return absl::UnavailableError(absl::StrCat("lost the PostgreSQL connection: ", ConnectionMessage(conn_)));
  }
  PGresult* settings = PQexec(conn_, kSessionSettings);
  absl::Status s = ResultStatus(settings, conn_, kSessionSettings);
  PQclear(settings);
  if (!s.ok()) return s;
  if (lost_transaction) {
    queue_.clear();
    return absl::UnavailableError("lost the PostgreSQL connection during a transaction; it was rolled back");
  }
  return absl::OkStatus();
}

void PgConnection::Reset() {
  queue_.clear();
  prepared_.clear();
  in_transaction_ = false;
  begin_sent_ = false;
  PQreset(conn_);
  if (PQstatus(conn_) == CONNECTION_OK) PQclear(PQexec(conn_, kSessionSettings));
}

// ---- statements ----

void PgConnection::Queue(std::string_view sql, SqlParams params, SqlRowFn on_row, int64_t* changed,
                         std::string* command_tag) {
  Pending p;
  p.sql = std::string(sql);
  p.params = std::move(params);
  p.on_row = std::move(on_row);
  p.changed = changed;
  p.command_tag = command_tag;
  queue_.push_back(std::move(p));
}

absl::Status PgConnection::Flush() {
  if (queue_.empty()) return absl::OkStatus();
  if (absl::Status s = EnsureConnected(); !s.ok()) return s;
  std::vector<Pending> batch = std::exchange(queue_, {});
  if (PQenterPipelineMode(conn_) != 1) {
    return absl::InternalError(absl::StrCat("PostgreSQL: cannot enter pipeline mode: ", ConnectionMessage(conn_)));
  }
  // What comes back, in order: a statement's own answer, or the answers to the prepare and the describe
  // sent before it the first time.
  enum class Kind { kStatement, kPrepare, kDescribe };
  struct Answer {
    size_t pending;
    Kind kind;
  };
  std::vector<Answer> answers;
  size_t describes = 0;
  absl::Status sent = absl::OkStatus();
  for (size_t i = 0; i < batch.size() && sent.ok(); ++i) {
    Pending& p = batch[i];
    const ParamArrays params(p.params);
    auto it = prepared_.find(p.sql);
    if (it == prepared_.end() && prepared_.size() < kMaxPreparedStatements) {
      PreparedStatement statement{absl::StrCat("memfleet_", statements_named_++), PostgresPlaceholders(p.sql)};
      // Parameter types as the server infers them from where each $N is used.
      if (PQsendPrepare(conn_, statement.name.c_str(), statement.postgres.c_str(), 0, nullptr) != 1) {
        sent = absl::UnavailableError(absl::StrCat("PostgreSQL: ", ConnectionMessage(conn_)));
        break;
      }
      answers.push_back({i, Kind::kPrepare});
      // Its columns' types, for the format of its later answers (this one comes in text).
      if (PQsendDescribePrepared(conn_, statement.name.c_str()) != 1) {
        sent = absl::UnavailableError(absl::StrCat("PostgreSQL: ", ConnectionMessage(conn_)));
        break;
      }
      answers.push_back({i, Kind::kDescribe});
      ++describes;
      it = prepared_.emplace(p.sql, std::move(statement)).first;
    }
    const int ok = it != prepared_.end()
                       ? PQsendQueryPrepared(conn_, it->second.name.c_str(), params.count(), params.values.data(),
                                             params.lengths.data(), params.formats.data(), it->second.result_format)
                       : PQsendQueryParams(conn_, PostgresPlaceholders(p.sql).c_str(), params.count(), nullptr,
                                           params.values.data(), params.lengths.data(), params.formats.data(), 0);
    if (ok != 1) {
      sent = absl::UnavailableError(absl::StrCat("PostgreSQL: ", ConnectionMessage(conn_)));
      break;
    }
    answers.push_back({i, Kind::kStatement});
  }
  if (sent.ok() && PQpipelineSync(conn_) != 1) sent = absl::UnavailableError(ConnectionMessage(conn_));
  if (!sent.ok()) {
    Reset();
    return sent;
  }
  if (in_transaction_) begin_sent_ = true;
  CountRoundTrip(answers.size() - describes);
  absl::Status first_error;
  {
    for (const Answer& answer : answers) {
      Pending& p = batch[answer.pending];
      ResultPtr result(PQgetResult(conn_));
      if (result == nullptr) {
        first_error.Update(ResultStatus(nullptr, conn_, p.sql));
        break;
      }
      const ExecStatusType status = PQresultStatus(result.get());
      if (status == PGRES_PIPELINE_ABORTED) {
        if (answer.kind == Kind::kPrepare) prepared_.erase(p.sql);
      } else if (absl::Status s = ResultStatus(result.get(), conn_, p.sql); !s.ok()) {
        if (answer.kind == Kind::kPrepare) prepared_.erase(p.sql);
        first_error.Update(s);
      } else if (answer.kind == Kind::kDescribe) {
        if (auto it = prepared_.find(p.sql); it != prepared_.end()) {
          it->second.result_format = BinaryReadable(result.get()) ? 1 : 0;
        }
      } else if (answer.kind == Kind::kStatement) {
        if (p.on_row) {
          for (int row = 0; row < PQntuples(result.get()); ++row) p.on_row(ResultRow(result.get(), row));
        }
        // PQcmdTuples also counts a SELECT's rows; only a change is counted here.
        if (p.changed != nullptr && PQresultStatus(result.get()) == PGRES_COMMAND_OK) {
          int64_t n = 0;
          *p.changed = absl::SimpleAtoi(PQcmdTuples(result.get()), &n) ? n : 0;
        }
        if (p.command_tag != nullptr) *p.command_tag = PQcmdStatus(result.get());
      }
      // Each statement's answer ends with a null result.
      while (PGresult* extra = PQgetResult(conn_)) PQclear(extra);
    }
    ResultPtr sync(PQgetResult(conn_));
    if (sync == nullptr || PQresultStatus(sync.get()) != PGRES_PIPELINE_SYNC) {
      first_error.Update(absl::InternalError("PostgreSQL: the pipeline did not end with its sync"));
    }
  }
  if (PQexitPipelineMode(conn_) != 1) {
    // A broken connection: the next statement reconnects.
    first_error.Update(absl::UnavailableError(absl::StrCat("PostgreSQL: ", ConnectionMessage(conn_))));
  }
  return first_error;
}

absl::Status PgConnection::Exec(std::string_view sql) {
  if (absl::Status s = Flush(); !s.ok()) return s;
  if (absl::Status s = EnsureConnected(); !s.ok()) return s;
  CountRoundTrip(1);
  ResultPtr result(PQexec(conn_, std::string(sql).c_str()));
  return ResultStatus(result.get(), conn_, sql);
}

absl::StatusOr<int64_t> PgConnection::Query(std::string_view sql, SqlParams params, const SqlRowFn& on_row) {
  int64_t changed = 0;
  Queue(sql, std::move(params), on_row, &changed, nullptr);
  if (absl::Status s = Flush(); !s.ok()) return s;
  return changed;
}

absl::Status PgConnection::Send(std::string_view sql, SqlParams params, SqlRowFn on_row, int64_t* changed) {
  Queue(sql, std::move(params), std::move(on_row), changed, nullptr);
  // Outside a transaction a statement stands alone: it runs now, as on SQLite.
  return !in_transaction_ || queue_.size() >= kMaxQueued ? Flush() : absl::OkStatus();
}

// ---- transactions ----

absl::Status PgConnection::Begin(SqlTransactionKind kind) {
  if (in_transaction_) return absl::FailedPreconditionError("a transaction is already open on this connection");
  Queue(kind == SqlTransactionKind::kWrite ? "BEGIN" : "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", {},
        SqlRowFn(), nullptr, nullptr);
  in_transaction_ = true;
  begin_sent_ = false;
  return absl::OkStatus();
}

absl::Status PgConnection::Commit() {
  if (!in_transaction_) return absl::FailedPreconditionError("no transaction to commit");
  std::string tag;
  Queue("COMMIT", {}, SqlRowFn(), nullptr, &tag);
  absl::Status s = Flush();
  if (!s.ok()) {
    Rollback();  // a statement before it failed: the transaction is open and aborted
    return s;
  }
  in_transaction_ = false;
  // COMMIT of a transaction that had failed answers ROLLBACK, not an error: nothing was stored.
  if (tag != "COMMIT") return absl::AbortedError(absl::StrCat("PostgreSQL rolled the transaction back (", tag, ")"));
  return absl::OkStatus();
}

void PgConnection::Rollback() {
  if (!in_transaction_) return;
  in_transaction_ = false;
  queue_.clear();  // never sent: nothing of it reached the server
  if (!std::exchange(begin_sent_, false)) return;
  if (conn_ == nullptr || PQstatus(conn_) != CONNECTION_OK) return;
  CountRoundTrip(1);
  PQclear(PQexec(conn_, "ROLLBACK"));
}

}  // namespace memfleet::storage
