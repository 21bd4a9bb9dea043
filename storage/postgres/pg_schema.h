// The memfleet schema on PostgreSQL, as an ordered list of migrations of its own (PostgreSQL version 1
// holds what SQLite reached in 14 steps; storage/sqlite/schema.cc). Migration i (0-based) takes a database from
// version i to i+1; table schema_version holds the version. A shipped migration is never edited.
//
//   MEMFLEET_RETURN_IF_ERROR(MigratePgToLatest(db));   // empty database -> latest; old -> upgraded
//
// Several servers may share one database and start at once: each migration runs in one transaction that
// first takes a transaction-level advisory lock, so exactly one of them applies it and the others then
// read the new version and apply nothing.
#ifndef MEMFLEET_STORAGE_POSTGRES_PG_SCHEMA_H_
#define MEMFLEET_STORAGE_POSTGRES_PG_SCHEMA_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/sql_connection.h"

namespace memfleet::storage {

int LatestPgSchemaVersion();

// 0 for a database without a schema_version table (in the connection's search_path).
absl::StatusOr<int> ReadPgSchemaVersion(SqlConnection& db);

// Applies every missing migration, each in its own transaction with the version bump. FailedPrecondition
// when the database is newer than this code, or has tables but no schema_version (not memfleet's).
absl::Status MigratePgToLatest(SqlConnection& db);
// The same up to `version` only: for tests that build a database as an older memfleet left it.
absl::Status MigratePgTo(SqlConnection& db, int version);

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_POSTGRES_PG_SCHEMA_H_
