#include "storage/backends/open_store.h"

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "storage/postgres/pg_store.h"
#include "storage/sqlite/sqlite_store.h"

namespace memfleet::storage {

bool IsPostgresUri(std::string_view db) {
  for (std::string_view scheme : {"postgresql://", "postgres://"}) {
    if (db.substr(0, scheme.size()) == scheme) return true;
  }
  return false;
}

absl::StatusOr<std::unique_ptr<SqlStore>> OpenStore(const std::string& db, const OpenStoreOptions& options) {
  if (!IsPostgresUri(db)) return OpenSqliteStore(db);
  PgStoreOptions pg;
  pg.writers = options.writers;
  return OpenPgStore(db, pg);
}

}  // namespace memfleet::storage
