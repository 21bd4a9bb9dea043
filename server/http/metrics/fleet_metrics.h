// The text of GET /metrics (docs/metrics.md): per device, from its latest report, its memory in bytes by
// parts that add up to its total, the total, and the CMA figures that overlap them, each in a metric of
// its own; whether its agent is connected, when it last captured and how many captures its spool dropped;
// per device its top processes by name; and the server's own counters. A null figure is an absent
// series, never 0.
//
//   std::string text = RenderFleetMetrics(rows, counters.Snapshot());
//
// Pure: rows in, text out; thread-safe.
#ifndef MEMFLEET_SERVER_HTTP_METRICS_FLEET_METRICS_H_
#define MEMFLEET_SERVER_HTTP_METRICS_FLEET_METRICS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "server/http/metrics/device_figures.h"
#include "server/http/metrics/server_counters.h"

namespace memfleet::metrics {

struct DeviceMetricsRow {
  std::string device_id;
  std::string model;
  std::string platform;                       // used when there is no report (the report's own platform wins)
  std::string build;                          // build fingerprint
  bool up = false;                            // its agent is connected now
  std::optional<double> last_capture_unix_s;  // nullopt: never captured
  uint64_t dropped_captures = 0;
  std::string tier;                      // of its latest report's figures: "kernel", "dumpsys"; "" unknown
  std::optional<DeviceFigures> figures;  // from the latest report; nullopt: none stored (or unreadable)
};

struct RenderInput {
  std::vector<DeviceMetricsRow> devices;  // in the order they are written
  ServerCountersSnapshot server;
  uint64_t unreadable_reports = 0;  // latest reports that could not be read (their devices lack figures)
  // memfleet_process_app_summary_bytes for the top processes (--metrics-app-summary): off by default, as
  // it multiplies the process series by nine.
  bool app_summary = false;
};

std::string RenderFleetMetrics(const RenderInput& input);

// Every series name the text can hold (a histogram's _bucket, _sum and _count included), for the
// dashboards that query them (docker/grafana).
std::vector<std::string> ExportedSeriesNames();

}  // namespace memfleet::metrics

#endif  // MEMFLEET_SERVER_HTTP_METRICS_FLEET_METRICS_H_
