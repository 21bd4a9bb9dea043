// ServerCounters: what memfleet-server counts about itself for /metrics — captures stored, acked as
// duplicates and rejected since it started, and how long each capture took from its last chunk to the
// agent's answer (a histogram). The ingest counts; the /metrics renderer reads a snapshot.
//
//   counters.CountStored();
//   counters.ObserveIngestLatency(0.042);
//   ServerCountersSnapshot s = counters.Snapshot();
//
// Thread-safe.
#ifndef MEMFLEET_SERVER_HTTP_METRICS_SERVER_COUNTERS_H_
#define MEMFLEET_SERVER_HTTP_METRICS_SERVER_COUNTERS_H_

#include <array>
#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace memfleet::metrics {

// Upper bounds of the ingest latency buckets, seconds: a capture is accounted and stored in tens of
// milliseconds on a quiet server (docs/performance.md) and waits longer behind a queue.
inline constexpr std::array<double, 12> kIngestLatencyBucketsS = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                                  0.5,   1,    2.5,   5,    10,  30};

struct ServerCountersSnapshot {
  uint64_t captures_stored = 0;
  uint64_t captures_duplicate = 0;  // acked, already stored
  uint64_t captures_rejected = 0;
  // Per bucket of kIngestLatencyBucketsS, observations at or below its bound (cumulative, as exposed).
  std::array<uint64_t, kIngestLatencyBucketsS.size()> ingest_latency_cumulative{};
  uint64_t ingest_latency_count = 0;
  double ingest_latency_sum_s = 0;
  // Filled by whoever renders, from the registry and the sweep coordinator.
  uint64_t agents_connected = 0;
  uint64_t sweeps_started = 0;
  uint64_t sweeps_running = 0;
  // Filled from the ingest: the in-flight budget (docs/performance.md, "Memory") and the group commit.
  uint64_t inflight_bytes = 0;
  uint64_t inflight_capacity_bytes = 0;  // 0: unbounded
  uint64_t streams_waiting_for_room = 0;
  uint64_t capture_commits = 0;  // the capture writer's transactions
};

class ServerCounters {
 public:
  void CountStored() ABSL_LOCKS_EXCLUDED(mu_);
  void CountDuplicate() ABSL_LOCKS_EXCLUDED(mu_);
  void CountRejected() ABSL_LOCKS_EXCLUDED(mu_);
  void ObserveIngestLatency(double seconds) ABSL_LOCKS_EXCLUDED(mu_);
  ServerCountersSnapshot Snapshot() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable absl::Mutex mu_;
  ServerCountersSnapshot counts_ ABSL_GUARDED_BY(mu_);
};

}  // namespace memfleet::metrics

#endif  // MEMFLEET_SERVER_HTTP_METRICS_SERVER_COUNTERS_H_
