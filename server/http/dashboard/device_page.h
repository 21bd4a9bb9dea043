// The device page (GET /device/<id>): the latest (or chosen) report of one device — the breakdown as a
// stacked bar (static reserved, kernel, processes, within DDR), the device figures, the process table
// of `memfleet report` (names link to the process page), the dumpsys view with its reconciliation
// against the device's own text, and the warnings.
//
//   std::string html = RenderDevicePage({.device = row, .report = report, .capture_id = id});
//
// Pure; thread-safe.
#ifndef MEMFLEET_SERVER_HTTP_DASHBOARD_DEVICE_PAGE_H_
#define MEMFLEET_SERVER_HTTP_DASHBOARD_DEVICE_PAGE_H_

#include <map>
#include <string>
#include <vector>

#include "chart/chart.h"
#include "report/report.h"
#include "server/http/dashboard/fleet_page.h"

namespace memfleet::dashboard {

// A capture of the list, with what marks it as `memfleet trend` does: a change of tier from the captures
// before it, the sweep it answered and its labels, by where they came from (docs/labels.md).
struct EarlierCapture {
  std::string captured_at;
  report::Kb total_kb;
  std::string sweep_id;                             // "" for a periodic capture
  std::map<std::string, std::string> labels;        // given by its sweep
  std::map<std::string, std::string> agent_labels;  // written by its agent
  std::string tier;  // stored with it: "kernel", "dumpsys"; "" unknown (a change of tier is marked)
};

struct DevicePageInput {
  FleetDevice device;  // what the fleet page says of it
  report::Report report;
  std::string capture_id;
  std::string captured_at;
  int trend_days = 30;
  // The device total over the last trend_days, oldest first: the chart draws the known values; the list
  // of captures (newest first, each a link to its report) shows them all.
  std::vector<chart::ChartPoint> total_trend;
  std::vector<EarlierCapture> captures;
};

// The breakdown as an inline SVG bar: one segment per known part, in proportion to DDR (or to the
// total when DDR is unknown); a null part has no segment and reads "-" in the legend.
std::string BreakdownBarSvg(const report::DeviceReport& device);

std::string RenderDevicePage(const DevicePageInput& input);

}  // namespace memfleet::dashboard

#endif  // MEMFLEET_SERVER_HTTP_DASHBOARD_DEVICE_PAGE_H_
