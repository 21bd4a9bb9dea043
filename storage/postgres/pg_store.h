// The store (storage/sql_store.h) on a PostgreSQL database, for a lab whose servers share one database:
// the same tables, SQL and answers as on SQLite (sql_store.h), plus FleetStore (Store::fleet()) for the
// servers to see each other. A PutCapture that returned true is committed (synchronous_commit), so the
// server may ack it to the agent.
//
//   absl::StatusOr<std::unique_ptr<SqlStore>> store = OpenPgStore("postgresql://memfleet@db.lab:5432/memfleet");
//
// The database must exist; opening creates and migrates memfleet's tables in it (pg_schema.h), serialized
// with any other server doing the same. Connections: `writers` of them for writes, so the server's ingest
// workers store captures side by side (PostgreSQL orders their transactions), and `readers` for queries,
// which never wait for an ingest transaction (they see the last committed state). A connection the server
// drops is reconnected at its next statement.
//
// Times are stored as on SQLite (canonical text, NormalizeTimestamp) in "C"-collated columns, so the
// comparisons and orderings are the same byte for byte.
#ifndef MEMFLEET_STORAGE_POSTGRES_PG_STORE_H_
#define MEMFLEET_STORAGE_POSTGRES_PG_STORE_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "storage/sql_store.h"

namespace memfleet::storage {

struct PgStoreOptions {
  // One per ingest worker: a capture's transaction holds its connection from BEGIN to COMMIT.
  size_t writers = 2;
  size_t readers = 2;
};

// `uri`: a libpq connection URI, postgresql://USER@HOST:PORT/DB.
absl::StatusOr<std::unique_ptr<SqlStore>> OpenPgStore(const std::string& uri,
                                                      const PgStoreOptions& options = PgStoreOptions());

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_POSTGRES_PG_STORE_H_
