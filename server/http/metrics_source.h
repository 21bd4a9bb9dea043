// MetricsSource: the text of GET /metrics now — the devices and their latest reports from the store (two
// queries, whatever the fleet's size), which agents are connected (in the whole fleet when servers share
// the database: server/fleet/fleet_link.h's OnlineDevices, as `memfleet devices`), the sweeps and the
// ingest counters — rendered by memfleet::metrics (docs/metrics.md). A report is read once: each device's
// figures are kept until its latest capture changes, so a scrape parses only the reports stored since the
// last one.
//
//   MetricsSource source(store, registry, &sweeps, counters, /*top_processes=*/20, false, &ingest, fleet_or_null);
//   absl::StatusOr<std::string> text = source.Render();   // Unavailable when the store cannot answer
//
// Thread-safe.
#ifndef MEMFLEET_SERVER_HTTP_METRICS_SOURCE_H_
#define MEMFLEET_SERVER_HTTP_METRICS_SOURCE_H_

#include <cstddef>
#include <map>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "server/fleet/agent_registry.h"
#include "server/fleet/fleet_link.h"
#include "server/http/metrics/device_figures.h"
#include "server/http/metrics/fleet_metrics.h"
#include "server/http/metrics/server_counters.h"
#include "server/fleet/sweep_coordinator.h"
#include "server/ingest/ingest_service.h"
#include "storage/query_store.h"

namespace memfleet::server {

// Default of memfleet-server --metrics-top-processes.
inline constexpr size_t kDefaultMetricsTopProcesses = 20;

class MetricsSource {
 public:
  // `sweeps` may be null (no sweep figures), `ingest` too (no in-flight and commit figures), `fleet` too
  // (a server alone with its database: its registry says which devices are up).
  MetricsSource(storage::QueryStore& store, const AgentRegistry& registry, const SweepCoordinator* sweeps,
                const metrics::ServerCounters& counters, size_t top_processes, bool app_summary = false,
                const IngestService* ingest = nullptr, FleetLink* fleet = nullptr)
      : store_(store),
        registry_(registry),
        sweeps_(sweeps),
        counters_(counters),
        top_processes_(top_processes),
        app_summary_(app_summary),
        ingest_(ingest),
        fleet_(fleet) {}

  absl::StatusOr<std::string> Render() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct CachedFigures {
    std::string capture_id;
    std::optional<metrics::DeviceFigures> figures;  // nullopt: the report could not be read
  };
  // The figures of `report`, from the cache when its capture is the one already read.
  const CachedFigures& FiguresOf(const storage::StoredReport& report) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  metrics::ServerCountersSnapshot ServerSnapshot() const;

  storage::QueryStore& store_;
  const AgentRegistry& registry_;
  const SweepCoordinator* sweeps_;
  const metrics::ServerCounters& counters_;
  const size_t top_processes_;
  const bool app_summary_;  // --metrics-app-summary
  const IngestService* ingest_;
  FleetLink* const fleet_;

  absl::Mutex mu_;  // one render at a time: scrapes are seconds apart, and it bounds the work
  std::map<std::string, CachedFigures> cache_ ABSL_GUARDED_BY(mu_);  // by device id
};

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_HTTP_METRICS_SOURCE_H_
