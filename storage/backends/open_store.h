// OpenStore: the Store a --db value names — a libpq URI (postgresql://... or postgres://...) opens a
// PgStore on that PostgreSQL database, anything else is an SQLite file path (created when missing).
//
//   absl::StatusOr<std::unique_ptr<Store>> store = OpenStore("postgresql://memfleet@db.lab:5432/memfleet");
//   absl::StatusOr<std::unique_ptr<Store>> local = OpenStore("/var/lib/memfleet/memfleet.db");
#ifndef MEMFLEET_STORAGE_BACKENDS_OPEN_STORE_H_
#define MEMFLEET_STORAGE_BACKENDS_OPEN_STORE_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "storage/store.h"

namespace memfleet::storage {

// True when `db` is a PostgreSQL connection URI rather than an SQLite path.
bool IsPostgresUri(std::string_view db);

absl::StatusOr<std::unique_ptr<Store>> OpenStore(const std::string& db);

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_BACKENDS_OPEN_STORE_H_
