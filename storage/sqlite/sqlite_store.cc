#include "storage/sqlite/sqlite_store.h"

#include <sqlite3.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "storage/sql_connection_pool.h"
#include "storage/sqlite/schema.h"
#include "storage/sqlite/sqlite_connection.h"
#include "storage/sqlite/sqlite_db.h"

namespace memfleet::storage {
namespace {

absl::Status Configure(SqliteDb& db, const SqliteStoreOptions& options, bool writable, bool in_memory) {
  if (sqlite3_busy_timeout(db.handle(), options.busy_timeout_ms) != SQLITE_OK) {
    return absl::InternalError("cannot set the SQLite busy timeout");
  }
  MEMFLEET_RETURN_IF_ERROR(db.Exec("PRAGMA foreign_keys = ON"));
  if (writable && !in_memory) {
    // WAL lets the read connection query while a capture is being written. The pragma answers with the
    // mode it ended up in; a file system without shared memory stays in rollback mode, which is slower
    // for concurrent reads (they wait on busy_timeout) but still correct, so that is not an error.
    MEMFLEET_RETURN_IF_ERROR(db.Exec("PRAGMA journal_mode = WAL"));
    // FULL, not NORMAL: in WAL mode NORMAL may lose the last commits on power loss, and the server acks
    // a capture (the agent then deletes its spooled copy) as soon as PutCapture returns.
    MEMFLEET_RETURN_IF_ERROR(db.Exec("PRAGMA synchronous = FULL"));
  }
  if (options.max_page_count > 0) {
    // A PRAGMA takes no bound parameters; this is an integer from the options, not caller text.
    MEMFLEET_RETURN_IF_ERROR(db.Exec(absl::StrCat("PRAGMA max_page_count = ", options.max_page_count)));
  }
  return absl::OkStatus();
}

std::shared_ptr<SqlConnectionPool> PoolOf(SqliteDb db) {
  std::vector<std::unique_ptr<SqlConnection>> connections;
  connections.push_back(std::make_unique<SqliteConnection>(std::move(db)));
  return std::make_shared<SqlConnectionPool>(std::move(connections));
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqlStore>> OpenSqliteStore(const std::string& path, const SqliteStoreOptions& options) {
  // SQLite would open "" as a private temporary database: never what a caller meant.
  if (path.empty()) return absl::InvalidArgumentError("database path is empty");
  const bool in_memory = path == ":memory:";
  const int flags = options.read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  MEMFLEET_ASSIGN_OR_RETURN(SqliteDb writer, SqliteDb::Open(path, flags));
  // A read-write open of a file the process may not write (chmod 0444) silently falls back to read-only.
  const bool read_only = options.read_only || writer.IsReadOnly();
  MEMFLEET_RETURN_IF_ERROR(Configure(writer, options, !read_only, in_memory));
  if (read_only) {
    MEMFLEET_RETURN_IF_ERROR(CheckSchemaIsLatest(writer));
  } else {
    // Only takes effect on a new, empty file (an existing one converts at its first ReturnFreePages): then
    // retention's deletions can be given back to the file system a few pages at a time.
    MEMFLEET_RETURN_IF_ERROR(writer.Exec("PRAGMA auto_vacuum = INCREMENTAL"));
    MEMFLEET_RETURN_IF_ERROR(MigrateToLatest(writer));
  }
  std::shared_ptr<SqlConnectionPool> writers = PoolOf(std::move(writer));
  std::shared_ptr<SqlConnectionPool> readers = writers;
  if (!in_memory && !read_only) {
    MEMFLEET_ASSIGN_OR_RETURN(SqliteDb reader, SqliteDb::Open(path, SQLITE_OPEN_READONLY));
    MEMFLEET_RETURN_IF_ERROR(Configure(reader, options, /*writable=*/false, in_memory));
    readers = PoolOf(std::move(reader));
  }
  return std::make_unique<SqlStore>(std::move(writers), std::move(readers), /*shared=*/false);
}

}  // namespace memfleet::storage
