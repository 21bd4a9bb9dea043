// Retention applied to a store: every device's captures planned by PlanRetention (retention_plan.h) and
// the planned ones deleted in small transactions, in the plan's order (no delta is ever left without its
// keyframe, whatever batch fails) — `memfleet-server compact` and the server's background thinning
// (docs/performance.md "Retention", docs/reliability.md "What retention keeps"). Deleting is irreversible:
// a dry run plans and counts only.
//
// A device whose deletion fails (a delta of another device naming one of its keyframes, a busy or full
// disk) keeps what its failed batch held and what came after; the run goes on with the other devices and
// names it in RetentionRun::failures. Only a store that cannot list its devices fails the whole run.
//
//   absl::StatusOr<RetentionRun> run = ApplyRetention(store, policy, now_ms, RetentionOptions{});
#ifndef MEMFLEET_SERVER_HISTORY_RETENTION_H_
#define MEMFLEET_SERVER_HISTORY_RETENTION_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/history/retention_plan.h"
#include "storage/sql_store.h"

namespace memfleet::server {

struct RetentionOptions {
  bool dry_run = false;
  // Captures deleted per transaction: each holds the write lock briefly, so ingest is never blocked for
  // long (a capture's commit waits at most one batch).
  size_t batch = 100;
  // Give the freed pages back afterwards (SqlStore::ReturnFreePages): to the file system on SQLite, with
  // one VACUUM if the file predates incremental vacuuming (`allow_vacuum`: it blocks ingest while it runs);
  // to the next captures on PostgreSQL (a plain VACUUM, which ingest does not wait for).
  bool return_free_pages = true;
  bool allow_vacuum = true;
};

struct RetentionRun {
  size_t devices = 0;
  size_t captures_before = 0;
  size_t deleted = 0;  // planned, on a dry run
  size_t kept_for_deltas = 0;
  bool thins_captures = false;  // RetentionPolicy::full is on: captures are deleted, not only raw text
  // The raw window (RetentionPolicy::raw; 0 when off): raw texts dropped (planned, on a dry run), and the
  // keyframes beyond the window that keep theirs for their deltas.
  int raw_days = 0;
  size_t raw_dropped = 0;
  size_t raw_kept_for_deltas = 0;
  int64_t file_bytes_freed = 0;  // 0 on a dry run
  // PostgreSQL: the deleted captures' space stays in the database's files, for the captures stored next.
  bool space_kept_for_new_captures = false;
  // One line per device that could not be thinned: "DEVICE: why". Its marks are not recorded.
  std::vector<std::string> failures;
};

absl::StatusOr<RetentionRun> ApplyRetention(storage::SqlStore& store, const RetentionPolicy& policy, int64_t now_ms,
                                            const RetentionOptions& options);

// "3 devices, 120 of 480 captures deleted (12 keyframes kept for their deltas), 5.2 MB returned", or "would
// be deleted" for a dry run ("480 captures, none deleted" with a raw window alone); with a raw window, ", raw
// text of 200 captures older than 30 days dropped, their reports kept (3 keyframes keep theirs for their
// deltas)"; ", 1 device failed" when one did (the failures themselves are not repeated).
std::string DescribeRetentionRun(const RetentionRun& run, bool dry_run);

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_HISTORY_RETENTION_H_
