// Test support: where each device figure of a report is on /metrics (docs/metrics.md) — the parts of the
// total in one metric, told apart by `part`; the total and the figures that overlap the parts in metrics
// of their own. Header-only.
//
//   for (const DeviceMemorySeries& s : kDeviceMemorySeries) {
//     EXPECT_EQ(FindSample(samples, s.name, s.Labels("qcom-edge")), device[s.field].get<double>() * 1024);
//   }
#ifndef MEMFLEET_TESTS_SUPPORT_DEVICE_MEMORY_SERIES_H_
#define MEMFLEET_TESTS_SUPPORT_DEVICE_MEMORY_SERIES_H_

#include <map>
#include <string>
#include <vector>

namespace memfleet::testing {

struct DeviceMemorySeries {
  std::string field;  // in the report's device: "kernel_kb"
  std::string name;   // the series
  std::string part;   // its `part` label; "": the series has none

  // The labels that pick this figure of `device_id`.
  std::map<std::string, std::string> Labels(const std::string& device_id) const {
    std::map<std::string, std::string> labels = {{"device_id", device_id}};
    if (!part.empty()) labels["part"] = part;
    return labels;
  }
};

inline const std::vector<DeviceMemorySeries> kDeviceMemorySeries = {
    {"static_reserved_kb", "memfleet_device_memory_bytes", "static_reserved"},
    {"kernel_kb", "memfleet_device_memory_bytes", "kernel"},
    {"processes_kb", "memfleet_device_memory_bytes", "processes"},
    {"total_kb", "memfleet_device_total_bytes", ""},
    {"kernel_cma_kb", "memfleet_device_kernel_cma_bytes", ""},
    {"gcma_kb", "memfleet_device_gcma_bytes", ""}};

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_DEVICE_MEMORY_SERIES_H_
