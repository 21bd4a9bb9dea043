// RetentionWorker: the server's background thinning (`memfleet-server --retain-full-days N`,
// `--retain-raw-days N`): every
// `interval` on the injected clock, ApplyRetention over its own connection to the database (an SQLite
// file or PostgreSQL, as --db says), in small transactions, so ingest (the server's own writers) waits at
// most one batch for a lock. Frees space without blocking ingest: SQLite's incremental vacuum, never its
// blocking VACUUM (`memfleet-server compact` does that once); PostgreSQL's plain VACUUM, which takes no
// lock ingest waits on.
//
//   absl::StatusOr<std::unique_ptr<RetentionWorker>> w = RetentionWorker::Start(options);
//
// Thread-safe. Its runs are a TaskRunner's periodic task (server/core/task_runner.h), the first at its
// start; Stop (or the destructor) ends them (a run in progress finishes its batch first). LabServer owns
// one when retention is on (LabServerOptions::retention).
#ifndef MEMFLEET_SERVER_HISTORY_RETENTION_WORKER_H_
#define MEMFLEET_SERVER_HISTORY_RETENTION_WORKER_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/core/clock.h"
#include "server/core/task_runner.h"
#include "server/history/retention.h"
#include "storage/sql_store.h"

namespace memfleet::server {

struct RetentionWorkerOptions {
  std::string db_path;  // the server's --db: an SQLite file or a postgresql:// URI
  RetentionPolicy policy;
  std::chrono::milliseconds interval = std::chrono::minutes(10);
  SteadyClock* clock = nullptr;     // null: the real steady clock
  std::function<int64_t()> now_ms;  // wall clock, UTC ms; null: the system clock
};

class RetentionWorker {
 public:
  static absl::StatusOr<std::unique_ptr<RetentionWorker>> Start(RetentionWorkerOptions options);
  ~RetentionWorker();  // Stop()

  // Waits for a run in progress, then no run starts again. Idempotent.
  void Stop();

  // Blocks until `n` runs have finished or `timeout` passed (real time); whether they had.
  bool WaitForRuns(size_t n, absl::Duration timeout) const;
  size_t runs() const;  // finished so far
  RetentionRun last_run() const;

 private:
  RetentionWorker(RetentionWorkerOptions options, std::unique_ptr<storage::SqlStore> store);
  void RunOnce() ABSL_LOCKS_EXCLUDED(mu_);

  const RetentionWorkerOptions options_;
  std::unique_ptr<storage::SqlStore> store_;  // used by the runner's thread only
  mutable absl::Mutex mu_;
  size_t runs_ ABSL_GUARDED_BY(mu_) = 0;
  RetentionRun last_ ABSL_GUARDED_BY(mu_);
  TaskRunner runner_;  // last: its thread starts after everything it uses
};

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_HISTORY_RETENTION_WORKER_H_
