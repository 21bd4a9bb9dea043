#include "storage/sqlite/migration_functions.h"

#include <sqlite3.h>

#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "storage/process_block.h"
#include "storage/report_codec.h"

namespace memfleet::storage {
namespace {

void CompressReportSqlFunction(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  if (argc != 1 || sqlite3_value_type(argv[0]) == SQLITE_NULL) {
    sqlite3_result_null(ctx);
    return;
  }
  const auto* text = reinterpret_cast<const char*>(sqlite3_value_text(argv[0]));
  const int bytes = sqlite3_value_bytes(argv[0]);
  std::string blob = CompressReportJson(std::string_view(text == nullptr ? "" : text, static_cast<size_t>(bytes)));
  sqlite3_result_blob64(ctx, blob.data(), blob.size(), SQLITE_TRANSIENT);
}

void RebaseReportSqlFunction(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  if (argc != 2 || sqlite3_value_type(argv[0]) != SQLITE_BLOB || sqlite3_value_type(argv[1]) != SQLITE_BLOB) {
    sqlite3_result_null(ctx);
    return;
  }
  auto blob_of = [](sqlite3_value* v) {
    const void* bytes = sqlite3_value_blob(v);
    return std::string_view(static_cast<const char*>(bytes), static_cast<size_t>(sqlite3_value_bytes(v)));
  };
  absl::StatusOr<std::string> json = DecompressReportJson(blob_of(argv[0]));
  absl::StatusOr<std::string> base_json = DecompressReportJson(blob_of(argv[1]));
  if (!json.ok() || !base_json.ok()) {
    sqlite3_result_null(ctx);
    return;
  }
  std::string rebased = CompressReportJsonAgainst(*json, *base_json);
  if (rebased.empty()) {
    sqlite3_result_null(ctx);
    return;
  }
  sqlite3_result_blob64(ctx, rebased.data(), rebased.size(), SQLITE_TRANSIENT);
}

// ---- memfleet_process_block ----

constexpr int kArguments = 2 + static_cast<int>(kProcessFigureCount);

// The group's rows so far; SQLite keeps a pointer to it in the aggregate's context.
using Samples = std::vector<ProcessSample>;

Samples** SamplesOf(sqlite3_context* context, int bytes) {
  return static_cast<Samples**>(sqlite3_aggregate_context(context, bytes));
}

void ProcessBlockStep(sqlite3_context* context, int argc, sqlite3_value** argv) {
  Samples** samples = SamplesOf(context, sizeof(Samples*));
  if (samples == nullptr || argc != kArguments) {
    sqlite3_result_error_nomem(context);
    return;
  }
  if (*samples == nullptr) *samples = new (std::nothrow) Samples();
  if (*samples == nullptr) {
    sqlite3_result_error_nomem(context);
    return;
  }
  ProcessSample s;
  s.name_no = sqlite3_value_int64(argv[0]);
  s.pid = sqlite3_value_int64(argv[1]);
  for (size_t i = 0; i < kProcessFigureCount; ++i) {
    sqlite3_value* v = argv[2 + i];
    if (sqlite3_value_type(v) != SQLITE_NULL) s.figures[i] = sqlite3_value_int64(v);
  }
  (*samples)->push_back(s);
}

void ProcessBlockFinal(sqlite3_context* context) {
  Samples** samples = SamplesOf(context, 0);  // 0: no allocation when Step never ran
  if (samples == nullptr || *samples == nullptr) {
    sqlite3_result_null(context);
    return;
  }
  const std::string block = EncodeProcessBlock(std::move(**samples));
  delete *samples;
  *samples = nullptr;
  sqlite3_result_blob64(context, block.data(), block.size(), SQLITE_TRANSIENT);
}

absl::Status Register(SqliteDb& db, const char* name, int arguments, int flags,
                      void (*function)(sqlite3_context*, int, sqlite3_value**),
                      void (*step)(sqlite3_context*, int, sqlite3_value**), void (*final)(sqlite3_context*)) {
  const int rc = sqlite3_create_function_v2(db.handle(), name, arguments, SQLITE_UTF8 | flags, nullptr, function, step,
                                            final, nullptr);
  if (rc != SQLITE_OK) return absl::InternalError(absl::StrCat("cannot register ", name, ": ", sqlite3_errstr(rc)));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterMigrationFunctions(SqliteDb& db) {
  absl::Status s =
      Register(db, "memfleet_compress_report", 1, SQLITE_DETERMINISTIC, CompressReportSqlFunction, nullptr, nullptr);
  if (s.ok()) {
    s = Register(db, "memfleet_rebase_report", 2, SQLITE_DETERMINISTIC, RebaseReportSqlFunction, nullptr, nullptr);
  }
  if (s.ok()) s = Register(db, "memfleet_process_block", kArguments, 0, nullptr, ProcessBlockStep, ProcessBlockFinal);
  return s;
}

}  // namespace memfleet::storage
