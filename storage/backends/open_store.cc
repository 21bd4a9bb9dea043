#include "storage/backends/open_store.h"

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "common/status_macros.h"
#include "storage/postgres/pg_store.h"
#include "storage/sqlite/sqlite_store.h"

namespace memfleet::storage {

bool IsPostgresUri(std::string_view db) {
  for (std::string_view scheme : {"postgresql://", "postgres://"}) {
    if (db.substr(0, scheme.size()) == scheme) return true;
  }
  return false;
}

absl::StatusOr<std::unique_ptr<Store>> OpenStore(const std::string& db) {
  if (!IsPostgresUri(db)) return OpenSqliteStore(db);
  MEMFLEET_ASSIGN_OR_RETURN(std::unique_ptr<PgStore> store, PgStore::Open(db));
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace memfleet::storage
