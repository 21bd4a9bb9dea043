// Test support: one storage test suite run against both Store backends — SQLite (a file in the test's
// folder) and PostgreSQL (a fresh database on the binary's real server, postgres_server.h). Header-only.
//
//   class TokenStoreTest : public testing::StoreOnBackendTest {};   // store_ open on GetParam()'s backend
//   TEST_P(TokenStoreTest, ...) { store_->PutToken(...); Reopen(); ... }
//   INSTANTIATE_TEST_SUITE_P(Backends, TokenStoreTest, testing::kBothBackends, testing::StoreBackendName);
#ifndef MEMFLEET_TESTS_SUPPORT_STORE_BACKENDS_H_
#define MEMFLEET_TESTS_SUPPORT_STORE_BACKENDS_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "storage/backends/open_store.h"
#include "storage/store.h"
#include "tests/support/postgres_server.h"
#include "tests/support/temp_dir.h"

namespace memfleet::testing {

enum class StoreBackend { kSqlite, kPostgres };

inline const auto kBothBackends = ::testing::Values(StoreBackend::kSqlite, StoreBackend::kPostgres);

inline std::string StoreBackendName(const ::testing::TestParamInfo<StoreBackend>& info) {
  return info.param == StoreBackend::kSqlite ? "Sqlite" : "Postgres";
}

// Where a test's store lives, as memfleet-server's --db says it: an SQLite file in `dir`, or the URI of a
// new, empty PostgreSQL database ("" and a test failure when there is no PostgreSQL server).
inline std::string NewStoreLocation(StoreBackend backend, const std::string& dir) {
  return backend == StoreBackend::kSqlite ? dir + "/memfleet.db" : NewPostgresDatabase();
}

// The store at `location` (NewStoreLocation), opened through storage::OpenStore as the server opens it;
// null and a test failure when it does not open.
inline std::unique_ptr<storage::Store> OpenStoreAt(const std::string& location) {
  if (location.empty()) return nullptr;
  absl::StatusOr<std::unique_ptr<storage::Store>> store = storage::OpenStore(location);
  if (!store.ok()) {
    ADD_FAILURE() << "cannot open the store " << location << ": " << store.status();
    return nullptr;
  }
  return *std::move(store);
}

// A suite run on both backends: store_ is open on a new, empty database of the test's backend.
class StoreOnBackendTest : public ::testing::TestWithParam<StoreBackend> {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    location_ = NewStoreLocation(GetParam(), dir_.path());
    Reopen();
  }

  // Closes store_ and opens the same database again (a server restart).
  void Reopen() {
    store_.reset();
    store_ = OpenStoreAt(location_);
    ASSERT_NE(store_, nullptr);
  }

  TempDir dir_{"memfleet_store"};
  std::string location_;  // the SQLite file, or the PostgreSQL database's URI
  std::unique_ptr<storage::Store> store_;
};

// A suite that needs the SQL store itself (retention reads its rows): store_ is a storage::SqlStore open on
// a new, empty database of the test's backend, location_ where it lives (as --db says it).
class SqlStoreOnBackendTest : public ::testing::TestWithParam<StoreBackend> {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    location_ = NewStoreLocation(GetParam(), dir_.path());
    ASSERT_FALSE(location_.empty());
    absl::StatusOr<std::unique_ptr<storage::SqlStore>> store = storage::OpenStore(location_);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  TempDir dir_{"memfleet_sql_store"};
  std::string location_;  // the SQLite file, or the PostgreSQL database's URI
  std::unique_ptr<storage::SqlStore> store_;
};

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_STORE_BACKENDS_H_
