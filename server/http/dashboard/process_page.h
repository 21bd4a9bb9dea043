// The process page (GET /device/<id>/process/<name>, or the bounded link of html.h ProcessPath): the
// process's whole name, its total over time on that device as the same SVG chart `memfleet trend --svg`
// writes, and the same process on the fleet's other devices of that model (their latest reports).
//
//   std::string html = RenderProcessPage({.device_id = "pixel-1", .process_name = "surfaceflinger", ...});
//
// Pure; thread-safe.
#ifndef MEMFLEET_SERVER_HTTP_DASHBOARD_PROCESS_PAGE_H_
#define MEMFLEET_SERVER_HTTP_DASHBOARD_PROCESS_PAGE_H_

#include <string>
#include <vector>

#include "chart/chart.h"
#include "report/report.h"

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
  std::vector<chart::ChartPoint> history;  // total_kb over time on this device, oldest first; known values only
  size_t unknown_samples = 0;              // captures where the figure was null (not drawn)
  std::vector<ProcessOnDevice> same_model;  // this process on the devices of `model`, this one included
  std::string name_capture_id;  // a capture holding the name: links name the process by it ("": each row's own)
};

std::string RenderProcessPage(const ProcessPageInput& input);

}  // namespace memfleet::dashboard

#endif  // MEMFLEET_SERVER_HTTP_DASHBOARD_PROCESS_PAGE_H_
