// The process page (GET /device/<id>/process/<name>[?metric=FIGURE], or the bounded link of html.h
// ProcessPath): the process's whole name; a figure of it over time on that device (total_kb, or any name
// `memfleet trend --metric` takes: app_summary.native_heap_kb, heaps.dalvik.pss_kb), as the same SVG chart
// `memfleet trend --svg` writes; its App Summary over time as a stacked chart and its latest heaps
// (docs/accounting.md section 8); and the same process on the fleet's other devices of that model (their
// latest reports).
//
//   std::string html = RenderProcessPage({.device_id = "pixel-1", .process_name = "surfaceflinger", ...});
//
// Pure; thread-safe.
#ifndef MEMFLEET_SERVER_HTTP_DASHBOARD_PROCESS_PAGE_H_
#define MEMFLEET_SERVER_HTTP_DASHBOARD_PROCESS_PAGE_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "chart/chart.h"
#include "report/report.h"
#include "server/http/dashboard/html.h"

namespace memfleet::dashboard {

struct ProcessOnDevice {
  std::string device_id;
  std::string captured_at;
  report::Kb total_kb;
  std::string capture_id;  // the device's latest capture, the figure's (absent name_capture_id, the link's)
};

struct ProcessPageInput {
  std::string device_id;
  std::string model;
  std::string process_name;
  std::string metric = "total_kb";         // the figure `history` holds
  std::vector<chart::ChartPoint> history;  // `metric` over time on this device, oldest first; known values only
  size_t unknown_samples = 0;              // captures where the figure was null (not drawn)
  std::vector<CaptureTier> history_tiers;  // each capture of the history's tier, oldest first (changes marked)
  // The App Summary's parts (java heap ... system, report::kAppSummaryFields without the two totals) over
  // time, oldest first, and how many captures had none (no full smaps): not drawn.
  std::vector<chart::StackedPoint> summary_history;
  size_t summary_missing = 0;
  // The process in the latest capture that has its heaps, and when.
  std::optional<report::ProcessReport> latest_breakdown;
  std::string latest_breakdown_at;
  std::vector<ProcessOnDevice> same_model;  // this process on the devices of `model`, this one included
  std::string name_capture_id;  // a capture holding the name: links name the process by it ("": each row's own)
};

std::string RenderProcessPage(const ProcessPageInput& input);

}  // namespace memfleet::dashboard

#endif  // MEMFLEET_SERVER_HTTP_DASHBOARD_PROCESS_PAGE_H_
