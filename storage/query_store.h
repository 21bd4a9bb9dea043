// QueryStore: the read side of the store — devices, reports and figures over time or across the fleet,
// as the query and baseline services answer them. Every method is pure: a wrapper must forward or fail
// each one explicitly.
#ifndef MEMFLEET_STORAGE_QUERY_STORE_H_
#define MEMFLEET_STORAGE_QUERY_STORE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/records.h"

namespace memfleet::storage {

class QueryStore {
 public:
  virtual ~QueryStore() = default;

  virtual absl::StatusOr<std::vector<DeviceSummaryRow>> ListDevices() = 0;
  virtual absl::StatusOr<std::optional<DeviceRecord>> GetDevice(const std::string& device_id) = 0;
  // The latest report of the device at or before `at` (RFC 3339; "" = latest). nullopt: nothing stored.
  virtual absl::StatusOr<std::optional<StoredReport>> GetReport(const std::string& device_id,
                                                                const std::string& at) = 0;
  virtual absl::StatusOr<std::optional<StoredReport>> GetReportByCapture(const std::string& capture_id) = 0;
  // One process figure over time, oldest first, each point with its capture's sweep and labels. `metric`
  // is a process figure column (total_kb, pss_kb, swap_pss_kb, gfxdev_kb, gl_kb, dma_kb, native_graphics_kb,
  // non_graphics_kb, graphics_dma_kb); InvalidArgument for anything else. `since` "" = all; limit 0 = all.
  virtual absl::StatusOr<std::vector<HistoryRow>> ProcessHistory(const std::string& device_id,
                                                                 const std::string& process_name,
                                                                 const std::string& metric, const std::string& since,
                                                                 uint32_t limit) = 0;
  // One device figure over time (ddr_kb, mem_total_kb, gcma_kb, static_reserved_kb, kernel_cma_kb,
  // kernel_kb, processes_kb, total_kb; InvalidArgument for anything else), oldest first; pid is 0.
  // `since` "" = all; limit 0 = all. Each point carries its capture's sweep and labels.
  virtual absl::StatusOr<std::vector<HistoryRow>> DeviceHistory(const std::string& device_id, const std::string& metric,
                                                                const std::string& since, uint32_t limit) = 0;
  // The latest report of every device with a device figure (ddr_kb, mem_total_kb, gcma_kb,
  // static_reserved_kb, kernel_cma_kb, kernel_kb, processes_kb, total_kb), or with a process figure of
  // the named process (`process_name` non-empty; `metric` then a process figure column).
  virtual absl::StatusOr<std::vector<FleetValueRow>> LatestPerDevice(const std::string& metric,
                                                                     const std::string& process_name) = 0;

  // How far retention has thinned the device's history; empty marks when it never has.
  virtual absl::StatusOr<RetentionMarks> GetRetentionMarks(const std::string& device_id) = 0;

  // The latest report of each device among the captures of a sweep, by device id.
  virtual absl::StatusOr<std::vector<StoredReport>> LatestReportsOfSweep(const std::string& sweep_id) = 0;
  // The latest report of each device whose latest capture is at or after `since` ("" = every device), by
  // device id.
  virtual absl::StatusOr<std::vector<StoredReport>> LatestReportsSince(const std::string& since) = 0;
  // For each (device, build its captures were taken on), the latest report of that device on that build
  // if it is at or after `since` ("" = all), by device id then build; build_fingerprint is filled.
  virtual absl::StatusOr<std::vector<StoredReport>> LatestReportsPerBuild(const std::string& since) = 0;

  // Labels (docs/labels.md). The captures carrying every one of `all_of`, each from its source
  // (InvalidArgument when it is empty), by device id, each device's newest first (ties on captured_at: the
  // greater capture id first, as in GetReport).
  virtual absl::StatusOr<std::vector<LabelledCapture>> LabelledCaptures(const LabelSet& all_of) = 0;
  // The labels of a stored capture by source; empty when it has none (or is not stored).
  virtual absl::StatusOr<LabelSet> CaptureLabels(const std::string& capture_id) = 0;
  // One figure of one stored report, as LatestPerDevice reads it: a device figure, or with a non-empty
  // `process_name` a process figure of that process (the lowest pid). nullopt when the figure is null or
  // the capture (or process) is not there.
  virtual absl::StatusOr<std::optional<int64_t>> CaptureFigure(const std::string& capture_id, const std::string& metric,
                                                               const std::string& process_name) = 0;
};

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_QUERY_STORE_H_
