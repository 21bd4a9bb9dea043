#include "storage/sql_connection_pool.h"

#include <utility>

namespace memfleet::storage {

SqlConnectionPool::SqlConnectionPool(std::vector<std::unique_ptr<SqlConnection>> connections)
    : connections_(std::move(connections)) {
  absl::MutexLock lock(&mu_);
  for (const std::unique_ptr<SqlConnection>& db : connections_) idle_.push_back(db.get());
}

SqlConnectionPool::Lease SqlConnectionPool::Acquire() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](std::vector<SqlConnection*>* idle) { return !idle->empty(); }, &idle_));
  SqlConnection* db = idle_.back();
  idle_.pop_back();
  return Lease(this, db);
}

void SqlConnectionPool::Return(SqlConnection* db) {
  absl::MutexLock lock(&mu_);
  idle_.push_back(db);
}

}  // namespace memfleet::storage
