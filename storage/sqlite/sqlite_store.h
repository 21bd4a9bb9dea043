// The store (storage/sql_store.h) on one SQLite file — WAL journal, synchronous=FULL, foreign keys on —
// created and migrated to the latest schema (schema.h) when opened. A PutCapture that returned true is on
// disk (the WAL is fsynced at COMMIT), so the server may ack it to the agent.
//
//   absl::StatusOr<std::unique_ptr<SqlStore>> store = OpenSqliteStore("/var/lib/memfleet/memfleet.db");
//   absl::StatusOr<std::unique_ptr<SqlStore>> tmp = OpenSqliteStore(":memory:");   // tests
//
// Connections: one writer (SQLite has one writer anyway) and one read-only reader, so a query does not
// wait for an ingest transaction (WAL readers see the last committed state). A ":memory:" database is
// private to its connection, so there reads share the writer. SQLite failures map to Status codes as in
// SqliteStatus (sqlite_db.h): a full disk (or the max_page_count quota) is ResourceExhausted, a read-only
// database FailedPrecondition.
#ifndef MEMFLEET_STORAGE_SQLITE_SQLITE_STORE_H_
#define MEMFLEET_STORAGE_SQLITE_SQLITE_STORE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "storage/sql_store.h"

namespace memfleet::storage {

struct SqliteStoreOptions {
  // Opens with SQLITE_OPEN_READONLY and does not migrate (the schema must be the latest); every write
  // then fails with FailedPrecondition. For tools that only read a server's database, and for tests.
  bool read_only = false;
  // How long a statement waits for another process's lock before failing with Unavailable.
  int busy_timeout_ms = 5000;
  // PRAGMA max_page_count when > 0: a size quota in pages; writes beyond it fail like a full disk.
  int64_t max_page_count = 0;
};

absl::StatusOr<std::unique_ptr<SqlStore>> OpenSqliteStore(const std::string& path,
                                                          const SqliteStoreOptions& options = SqliteStoreOptions());

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_SQLITE_SQLITE_STORE_H_
