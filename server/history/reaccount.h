// Re-accounting: recompute stored reports from the stored raw captures (after a rule or parser change),
// without the devices — for `memfleet-server --reaccount` and the Reaccount RPC.
//
//   absl::StatusOr<ReaccountResult> r = ReaccountCaptures(store, /*device_id=*/"");
//   std::cout << r->reaccounted << " re-accounted, " << r->failed << " failed\n";
//
// Runs the engine on the calling thread; the store serializes its writes, so ingest may go on meanwhile.
// On PostgreSQL, `memfleet-server --reaccount` run on several machines at once shares the work
// (ReaccountSharedCaptures).
#ifndef MEMFLEET_SERVER_HISTORY_REACCOUNT_H_
#define MEMFLEET_SERVER_HISTORY_REACCOUNT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/capture_store.h"
#include "storage/fleet_store.h"
#include "storage/sql_store.h"

namespace memfleet::server {

struct ReaccountResult {
  uint64_t reaccounted = 0;
  uint64_t failed = 0;                // a raw capture that did not decode, or a report the store refused
  std::vector<std::string> failures;  // "<capture id>: <why>", the first few
  // Captures beyond the raw window (`memfleet-server --retain-raw-days`): their raw text is gone, so their
  // stored report stays as it was. Not failures: nothing is wrong with them. Re-accounting reaches back
  // only as far as the raw window.
  uint64_t skipped_raw_dropped = 0;
  int skipped_raw_days = 0;  // the window that dropped the last of them, as its codec names it (0: unknown)
  // ReaccountSharedCaptures: the run walked, and whether another server had started it.
  int64_t run_id = 0;
  bool joined_run = false;
};

// ", 120 skipped: their raw text is beyond the raw window (30 days, memfleet-server --retain-raw-days), their
// reports stay as they were"; "" when none was skipped.
std::string DescribeReaccountSkips(const ReaccountResult& result);

// `device_id` "" = every stored capture. An error only when the store cannot be walked at all.
absl::StatusOr<ReaccountResult> ReaccountCaptures(storage::CaptureStore& store, const std::string& device_id);

// The same on a PostgreSQL history shared by several servers: servers re-accounting it at once split the
// captures between them, each capture re-accounted by one of them (FleetStore::ForEachClaimedRawCapture,
// claimed through `shared`, reports written through `store`) — `memfleet-server --reaccount` and the
// Reaccount RPC of a server in a fleet alike. The result counts this server's share. `now`: RFC 3339, the
// run's start when this one starts it.
absl::StatusOr<ReaccountResult> ReaccountSharedCaptures(storage::CaptureStore& store, storage::FleetStore& shared,
                                                        const std::string& device_id, const std::string& now);
// Over one store that is both (SQLite's walks every capture: one server uses it).
inline absl::StatusOr<ReaccountResult> ReaccountSharedCaptures(storage::SqlStore& store, const std::string& device_id,
                                                               const std::string& now) {
  return ReaccountSharedCaptures(store, store, device_id, now);
}

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_HISTORY_REACCOUNT_H_
