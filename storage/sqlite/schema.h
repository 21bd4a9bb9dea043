// The memfleet database schema as an ordered list of migrations: migration i (0-based) takes a database
// from version i to version i+1; table `schema_version` holds the version. A shipped migration is never
// edited — change the schema by appending one.
//
//   MEMFLEET_RETURN_IF_ERROR(MigrateToLatest(db));   // new file -> latest; old -> upgraded in place
//
// Threads: the functions use the given connection only; MigrateToLatest takes SQLite's write lock, so two
// processes opening the same file at once apply each migration exactly once.
#ifndef MEMFLEET_STORAGE_SQLITE_SCHEMA_H_
#define MEMFLEET_STORAGE_SQLITE_SCHEMA_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/sqlite/sqlite_db.h"

namespace memfleet::storage {

// Index names, shared with the query-plan tests so a rename cannot silently leave a hot query unindexed.
// A process trend reads the device's range of device_reports_by_device_time (schema version 19: a
// capture's process figures are a block in its device_reports row).
inline constexpr char kDeviceReportsLatestIndex[] = "device_reports_by_device_time";
inline constexpr char kCapturesLatestIndex[] = "captures_by_device_time";
inline constexpr char kCaptureLabelsIndex[] = "capture_labels_by_key_value";

// The migration scripts, oldest first. Migrations().size() is the version this code writes.
const std::vector<std::string>& Migrations();
int LatestSchemaVersion();

// 0 for a database without a `schema_version` table (a new file).
absl::StatusOr<int> ReadSchemaVersion(SqliteDb& db);

// Applies every missing migration, each in its own IMMEDIATE transaction together with the version
// bump, so a failure leaves the database at the last complete version. FailedPrecondition when the
// database is newer than this code.
absl::Status MigrateToLatest(SqliteDb& db);

// For read-only connections: OK only when the database is exactly at LatestSchemaVersion().
absl::Status CheckSchemaIsLatest(SqliteDb& db);

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_SQLITE_SCHEMA_H_
