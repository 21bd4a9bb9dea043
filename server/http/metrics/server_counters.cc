#include "server/http/metrics/server_counters.h"

namespace memfleet::metrics {

void ServerCounters::CountStored() {
  absl::MutexLock lock(&mu_);
  ++counts_.captures_stored;
}

void ServerCounters::CountDuplicate() {
  absl::MutexLock lock(&mu_);
  ++counts_.captures_duplicate;
}

void ServerCounters::CountRejected() {
  absl::MutexLock lock(&mu_);
  ++counts_.captures_rejected;
}

void ServerCounters::ObserveIngestLatency(double seconds) {
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < kIngestLatencyBucketsS.size(); ++i) {
    if (seconds <= kIngestLatencyBucketsS[i]) ++counts_.ingest_latency_cumulative[i];
  }
  ++counts_.ingest_latency_count;
  counts_.ingest_latency_sum_s += seconds;
}

ServerCountersSnapshot ServerCounters::Snapshot() const {
  absl::MutexLock lock(&mu_);
  return counts_;
}

}  // namespace memfleet::metrics
