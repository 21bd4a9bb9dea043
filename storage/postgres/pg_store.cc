#include "storage/postgres/pg_store.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/status_macros.h"
#include "storage/postgres/pg_connection.h"
#include "storage/postgres/pg_schema.h"
#include "storage/sql_connection_pool.h"

namespace memfleet::storage {
namespace {

absl::StatusOr<std::shared_ptr<SqlConnectionPool>> Pool(const std::string& uri, size_t size,
                                                        std::unique_ptr<PgConnection> first) {
  std::vector<std::unique_ptr<SqlConnection>> connections;
  if (first != nullptr) connections.push_back(std::move(first));
  while (connections.size() < std::max<size_t>(size, 1)) {
    MEMFLEET_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> db, PgConnection::Connect(uri));
    connections.push_back(std::move(db));
  }
  return std::make_shared<SqlConnectionPool>(std::move(connections));
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqlStore>> OpenPgStore(const std::string& uri, const PgStoreOptions& options) {
  MEMFLEET_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> first, PgConnection::Connect(uri));
  MEMFLEET_RETURN_IF_ERROR(MigratePgToLatest(*first));
  MEMFLEET_ASSIGN_OR_RETURN(std::shared_ptr<SqlConnectionPool> writers, Pool(uri, options.writers, std::move(first)));
  MEMFLEET_ASSIGN_OR_RETURN(std::shared_ptr<SqlConnectionPool> readers, Pool(uri, options.readers, nullptr));
  return std::make_unique<SqlStore>(std::move(writers), std::move(readers), /*shared=*/true);
}

}  // namespace memfleet::storage
