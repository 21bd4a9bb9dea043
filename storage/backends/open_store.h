// OpenStore: the store a --db value names — a libpq URI (postgresql://... or postgres://...) opens it on
// that PostgreSQL database, anything else on an SQLite file (created when missing). The same store
// (storage/sql_store.h) either way.
//
//   absl::StatusOr<std::unique_ptr<SqlStore>> store = OpenStore("postgresql://memfleet@db.lab:5432/memfleet");
//   absl::StatusOr<std::unique_ptr<SqlStore>> local = OpenStore("/var/lib/memfleet/memfleet.db");
#ifndef MEMFLEET_STORAGE_BACKENDS_OPEN_STORE_H_
#define MEMFLEET_STORAGE_BACKENDS_OPEN_STORE_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "storage/sql_store.h"

namespace memfleet::storage {

struct OpenStoreOptions {
  // PostgreSQL: connections that write, one per ingest worker (SQLite has one writer whatever this says).
  size_t writers = 2;
};

// True when `db` is a PostgreSQL connection URI rather than an SQLite path.
bool IsPostgresUri(std::string_view db);

absl::StatusOr<std::unique_ptr<SqlStore>> OpenStore(const std::string& db,
                                                    const OpenStoreOptions& options = OpenStoreOptions());

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_BACKENDS_OPEN_STORE_H_
