#include "server/history/retention_worker.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "storage/backends/open_store.h"

namespace memfleet::server {

absl::StatusOr<std::unique_ptr<RetentionWorker>> RetentionWorker::Start(RetentionWorkerOptions options) {
  // Its own connections, whichever backend --db names: one writer, as its deletes are one transaction at a
  // time.
  storage::OpenStoreOptions open;
  open.writers = 1;
  MEMFLEET_ASSIGN_OR_RETURN(std::unique_ptr<storage::SqlStore> store, storage::OpenStore(options.db_path, open));
  if (!options.now_ms) {
    options.now_ms = [] {
      return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
    };
  }
  return std::unique_ptr<RetentionWorker>(new RetentionWorker(std::move(options), std::move(store)));
}

RetentionWorker::RetentionWorker(RetentionWorkerOptions options, std::unique_ptr<storage::SqlStore> store)
    : options_(std::move(options)),
      store_(std::move(store)),
      runner_(options_.clock != nullptr ? *options_.clock : RealSteadyClock()) {
  runner_.RunEvery(options_.interval, [this] { RunOnce(); });
}

// Before the members the runs use go.
RetentionWorker::~RetentionWorker() { Stop(); }

void RetentionWorker::Stop() { runner_.Stop(); }

bool RetentionWorker::WaitForRuns(size_t n, absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  auto done = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return runs_ >= n; };
  return mu_.AwaitWithTimeout(absl::Condition(&done), timeout);
}

size_t RetentionWorker::runs() const {
  absl::MutexLock lock(&mu_);
  return runs_;
}

RetentionRun RetentionWorker::last_run() const {
  absl::MutexLock lock(&mu_);
  return last_;
}

void RetentionWorker::RunOnce() {
  RetentionOptions apply;
  apply.allow_vacuum = false;
  // Outside the lock: a run takes seconds on a large database, and last_run() must not wait for it.
  absl::StatusOr<RetentionRun> run = ApplyRetention(*store_, options_.policy, options_.now_ms(), apply);
  if (run.ok()) {
    if (run->deleted > 0 || run->raw_dropped > 0 || !run->failures.empty()) {
      LogLine(absl::StrCat("retention: ", DescribeRetentionRun(*run, false)));
    }
    for (const std::string& failure : run->failures) {
      LogLine(absl::StrCat("retention: not thinned: ", failure, " (retried at the next interval)"));
    }
  } else {
    LogLine(absl::StrCat("retention: ", run.status().message(), " (retried at the next interval)"));
  }
  absl::MutexLock lock(&mu_);
  ++runs_;
  if (run.ok()) last_ = *run;
}

}  // namespace memfleet::server
