// SqlConnectionPool: the store's connections of one kind (its writers, or its readers), each lent to one
// thread at a time. A store with one writer connection (SQLite: one writer anyway) serializes its writes
// through it; one with a writer per ingest worker (PostgreSQL) lets them write side by side.
//
//   SqlConnectionPool::Lease db = writers.Acquire();   // waits while every connection is lent
//   MEMFLEET_RETURN_IF_ERROR(Run(*db, "DELETE FROM sweep_relays WHERE sweep_id = ?1", {SqlValue::Text(id)}).status());
//
// Thread-safe. A lease must end before the pool is destroyed.
#ifndef MEMFLEET_STORAGE_SQL_CONNECTION_POOL_H_
#define MEMFLEET_STORAGE_SQL_CONNECTION_POOL_H_

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "storage/sql_connection.h"

namespace memfleet::storage {

class SqlConnectionPool {
 public:
  explicit SqlConnectionPool(std::vector<std::unique_ptr<SqlConnection>> connections);
  SqlConnectionPool(const SqlConnectionPool&) = delete;
  SqlConnectionPool& operator=(const SqlConnectionPool&) = delete;

  // One connection, this thread's until the lease ends.
  class Lease {
   public:
    Lease(Lease&& other) noexcept : pool_(std::exchange(other.pool_, nullptr)), db_(other.db_) {}
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() {
      if (pool_ != nullptr) pool_->Return(db_);
    }
    SqlConnection& operator*() const { return *db_; }
    SqlConnection* operator->() const { return db_; }

   private:
    friend class SqlConnectionPool;
    Lease(SqlConnectionPool* pool, SqlConnection* db) : pool_(pool), db_(db) {}
    SqlConnectionPool* pool_;
    SqlConnection* db_;
  };

  Lease Acquire() ABSL_LOCKS_EXCLUDED(mu_);
  size_t size() const { return connections_.size(); }
  SqlDialect dialect() const { return connections_.front()->dialect(); }

 private:
  void Return(SqlConnection* db) ABSL_LOCKS_EXCLUDED(mu_);

  const std::vector<std::unique_ptr<SqlConnection>> connections_;
  absl::Mutex mu_;
  std::vector<SqlConnection*> idle_ ABSL_GUARDED_BY(mu_);
};

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_SQL_CONNECTION_POOL_H_
