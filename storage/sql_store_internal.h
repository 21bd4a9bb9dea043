// What the files of SqlStore (sql_store*.cc) share: the statements whose text depends on the dialect,
// built once per store, the few words of SQL the engines spell differently, and small row readers. For
// those files only.
#ifndef MEMFLEET_STORAGE_SQL_STORE_INTERNAL_H_
#define MEMFLEET_STORAGE_SQL_STORE_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "storage/sql_connection.h"
#include "storage/sql_store.h"

namespace memfleet::storage {

// The larger of two values: SQLite's two-argument MAX is PostgreSQL's GREATEST.
inline const char* GreatestOf(SqlDialect d) { return d == SqlDialect::kSqlite ? "MAX" : "GREATEST"; }

// A LIMIT parameter: 0 means no limit, which is SQLite's -1 and PostgreSQL's NULL.
inline SqlValue LimitOf(SqlDialect d, uint64_t limit) {
  if (limit != 0) return SqlValue::Int(static_cast<int64_t>(limit));
  return d == SqlDialect::kSqlite ? SqlValue::Int(-1) : SqlValue::Null();
}

// The statements whose text depends on the dialect.
struct SqlStore::Sql {
  explicit Sql(SqlDialect d);

  std::string upsert_device;
  std::string touch_device;
  std::string refresh_from_latest_report;
  std::string capture_for_replace;
  std::string insert_device_report;
  std::string insert_report_and_frame;  // empty: the engine runs the report and its frame as two statements
  std::string upsert_device_report;
  std::string latest_reports_per_build;
  std::string record_retention;
  std::string defer_foreign_keys;
};

namespace sql_store_internal {

// Names cached by SqlStore at the most (a farm has a few thousand).
inline constexpr size_t kMaxCachedNames = 100'000;
// A write transaction PostgreSQL aborted (a deadlock between servers' transactions) is tried this often.
inline constexpr int kWriteAttempts = 3;

inline std::string ReadFirstText(const SqlRow& row) { return row.ColumnText(0); }

}  // namespace sql_store_internal
}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_SQL_STORE_INTERNAL_H_
