// PgStore's connection handle, shared by the files that implement PgStore (pg_store.cc, pg_fleet.cc).
#ifndef MEMFLEET_STORAGE_POSTGRES_PG_STORE_INTERNAL_H_
#define MEMFLEET_STORAGE_POSTGRES_PG_STORE_INTERNAL_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "storage/postgres/pg_connection.h"

namespace memfleet::storage::pg_store_internal {

// One PostgreSQL connection and the mutex that serializes its use (libpq: one thread at a time).
struct Connection {
  absl::Mutex mu;
  PgConnection db ABSL_GUARDED_BY(mu);
};

}  // namespace memfleet::storage::pg_store_internal

#endif  // MEMFLEET_STORAGE_POSTGRES_PG_STORE_INTERNAL_H_
