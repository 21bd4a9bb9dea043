// SweepStore: sweeps as the coordinator records them, so a restarted server can end the ones its previous
// process never finished. Every method is pure: a wrapper must forward or fail each one explicitly.
#ifndef MEMFLEET_STORAGE_SWEEP_STORE_H_
#define MEMFLEET_STORAGE_SWEEP_STORE_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace memfleet::storage {

struct SweepRecord {
  std::string sweep_id;
  std::string started_at;
  std::string selector;  // the CLI's --where terms, joined
  // device_id -> "sent" | "capturing" | "stored" | "failed" | "offline" | "timed_out" | "interrupted"
  std::map<std::string, std::string> states;
  std::string finished_at;  // "" while running
  std::string server_id;    // the server running it (--server-id); "" on a server alone with its database
};

class SweepStore {
 public:
  virtual ~SweepStore() = default;

  virtual absl::Status PutSweep(const SweepRecord& sweep) = 0;
  virtual absl::StatusOr<std::optional<SweepRecord>> GetSweep(const std::string& sweep_id) = 0;
  // Sweeps recorded as running (finished_at ""), oldest id first: at a server's start, the ones its
  // previous process (or a server of its fleet that died) never finished, and those other servers run.
  virtual absl::StatusOr<std::vector<SweepRecord>> UnfinishedSweeps() = 0;
};

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_SWEEP_STORE_H_
