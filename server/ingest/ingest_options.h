// IngestOptions: how the server's ingest treats agent streams (limits, clock, security, delta storage,
// memory).
// Shared by IngestService, which accepts the streams, and AgentStream, which runs each one.
#ifndef MEMFLEET_SERVER_INGEST_INGEST_OPTIONS_H_
#define MEMFLEET_SERVER_INGEST_INGEST_OPTIONS_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "proto/capture_codec.h"
#include "server/core/clock.h"
#include "server/ingest/capture_writer.h"
#include "server/ingest/clock_skew.h"
#include "server/ingest/delta_keyframes.h"
#include "server/ingest/hello_watchdog.h"
#include "server/ingest/inflight_budget.h"
#include "server/http/metrics/server_counters.h"
#include "server/security/agent_limits.h"
#include "common/version.h"
#include "server/security/authorizer.h"

namespace memfleet::server {

struct IngestOptions {
  uint32_t welcome_interval_s = 0;  // Welcome.interval_s: 0 lets each agent keep its own
  std::string server_version = std::string("memfleet-server ") + Version();  // common/version.h
  wire::AssemblyLimits limits;
  std::function<std::string()> now;  // RFC 3339 wall clock; null: NowRfc3339
  // A capture dated more than this after `now` is refused for good (CaptureRejected{retry=false}): kept, a
  // device clock at 9999-12-31 would stay the device's latest capture forever (clock_skew.h).
  std::chrono::seconds max_clock_skew = kDefaultMaxClockSkew;
  // Per-agent stream and capture-rate limits (docs/security.md); null: none.
  security::AgentLimits* agent_limits = nullptr;
  DeltaOptions delta;          // delta storage of raw captures (delta_keyframes.h)
  HelloWatchdogOptions hello;  // streams that have not said Hello yet (hello_watchdog.h)
  // How often the tokens of open agent streams are checked again, so that a revoked token's idle stream
  // ends without waiting for its next capture (which is checked anyway). 0: only at each capture.
  std::chrono::milliseconds token_recheck{10000};
  SteadyClock* token_recheck_clock = nullptr;  // the recheck period is measured on it; null: RealSteadyClock()
  // Captures stored, duplicate and rejected, and the ingest latency, for /metrics; null: not counted.
  metrics::ServerCounters* counters = nullptr;
  // The memory all streams' captures may hold at once (inflight_budget.h); null: unbounded.
  InflightBudget* inflight = nullptr;
  CaptureWriter::Options writer;  // group commit (capture_writer.h)
};

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_INGEST_INGEST_OPTIONS_H_
