// Store: memfleet's persistent state — devices, raw captures (compressed), device and per-process
// reports, sweeps, tokens, baselines — as the combination of five narrow interfaces, so each part of the
// server asks for only what it uses (the Authorizer takes a TokenStore). The interfaces are
// database-neutral: SqlStore (sql_store.h) implements them once, on an SQLite file or a PostgreSQL
// database several servers share.
//
//   absl::StatusOr<std::unique_ptr<Store>> store = OpenSqliteStore("/var/lib/memfleet/memfleet.db");
//   absl::StatusOr<bool> inserted = (*store)->PutCapture(record);   // false: already stored (dedup)
//
// Every method of every interface is pure: a wrapper that forgets one does not compile, so none can
// silently answer "no tokens" and turn authentication off.
//
// Thread-safety: every method may be called from any thread; implementations serialize writes (one
// writer) and may run reads concurrently.
#ifndef MEMFLEET_STORAGE_STORE_H_
#define MEMFLEET_STORAGE_STORE_H_

#include "storage/baseline_store.h"
#include "storage/capture_store.h"
#include "storage/fleet_store.h"
#include "storage/query_store.h"
#include "storage/records.h"
#include "storage/sweep_store.h"
#include "storage/token_store.h"

namespace memfleet::storage {

class Store : public CaptureStore, public QueryStore, public SweepStore, public TokenStore, public BaselineStore {
 public:
  ~Store() override = default;

  // The fleet state several servers share (fleet_store.h); nullptr for a database only one server uses.
  virtual FleetStore* fleet() = 0;
};

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_STORE_H_
