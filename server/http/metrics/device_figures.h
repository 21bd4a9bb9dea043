// What /metrics shows of one device's latest report: its device figures (docs/accounting.md) and its
// biggest processes. Processes are named by their name, never their pid (a pid label would make a new
// series at every restart): processes sharing a name on one device are summed into one, and a figure
// null for any of them is null for the sum. The top `top_processes` by total_kb are kept (a null total
// ranks last), bounding the series per device.
//
//   DeviceFigures f = FiguresOf(report, /*top_processes=*/20);
//
// Pure; thread-safe.
#ifndef MEMFLEET_SERVER_HTTP_METRICS_DEVICE_FIGURES_H_
#define MEMFLEET_SERVER_HTTP_METRICS_DEVICE_FIGURES_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "report/report.h"

namespace memfleet::metrics {

struct ProcessFigures {
  std::string name;
  size_t process_count = 0;  // processes of this name summed
  report::Kb total_kb;
  report::Kb gl_kb;
  report::Kb dma_kb;
  report::Kb native_graphics_kb;
  report::Kb non_graphics_kb;
  // The App Summary of the processes summed (docs/accounting.md section 8); null when one has none (no
  // full smaps in the capture).
  std::optional<report::AppSummary> app_summary;
};

struct DeviceFigures {
  std::string platform;  // the report's ("qcom", "mtk", ...)
  report::Kb total_kb;
  report::Kb static_reserved_kb;
  report::Kb kernel_kb;
  report::Kb kernel_cma_kb;
  report::Kb gcma_kb;
  report::Kb processes_kb;
  std::vector<ProcessFigures> top_processes;  // biggest total first; ties by name
};

DeviceFigures FiguresOf(const report::Report& report, size_t top_processes);

}  // namespace memfleet::metrics

#endif  // MEMFLEET_SERVER_HTTP_METRICS_DEVICE_FIGURES_H_
