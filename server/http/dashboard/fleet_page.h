// The fleet page (GET /): every device with its state, model, platform, build, last capture and total,
// sortable by a column (?sort=KEY, ?sort=-KEY for descending, links in the headers: no scripts), the
// `--where` terms it was filtered by, and per-model min/p50/p90/max of the total, saying under it which
// model's totals mix tiers or have devices of unknown tier beside known ones (report/tier_mix.h).
//
//   std::vector<FleetDevice> rows = ...;   // already filtered by the where terms
//   if (absl::Status s = SortFleet(rows, "-total"); !s.ok()) ...   // 400: unknown column
//   std::string html = RenderFleetPage(rows, groups, {.sort = "-total", .where = {"model=Pixel 8"}});
//
// Pure; thread-safe.
#ifndef MEMFLEET_SERVER_HTTP_DASHBOARD_FLEET_PAGE_H_
#define MEMFLEET_SERVER_HTTP_DASHBOARD_FLEET_PAGE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "report/report.h"
#include "report/tier_mix.h"

namespace memfleet::dashboard {

struct FleetDevice {
  std::string device_id;
  std::string model;
  std::string platform;
  std::string build;  // the build fingerprint
  std::string tier;   // of its latest capture's figures: "kernel", "dumpsys"; "" unknown
  bool online = false;
  std::string last_capture_at;               // RFC 3339; "" when none stored
  report::Kb total_kb;                       // of the latest report; null when unknown or none
  std::vector<report::Kb> recent_totals_kb;  // the totals of its captures of the last week, oldest first
};

// One model's device totals (the devices whose total is known).
struct FleetGroup {
  std::string model;
  size_t devices = 0;
  int64_t min_kb = 0;
  int64_t p50_kb = 0;
  int64_t p90_kb = 0;
  int64_t max_kb = 0;
  size_t unknown = 0;             // devices of the model whose total is unknown: not in `devices` nor the figures
  report::TierCounts tiers = {};  // the `devices` by the tier of their latest capture's figures
};

struct FleetView {
  std::string sort = "device_id";  // as given in ?sort=
  std::vector<std::string> where;  // the selector terms applied
};

// The sort keys: device_id, state, model, platform, build, tier, last_capture, total; "-" first: descending.
// Ties (and unknown totals, always last) keep device id order. InvalidArgument naming the keys.
absl::Status SortFleet(std::vector<FleetDevice>& rows, absl::string_view sort);

std::string RenderFleetPage(const std::vector<FleetDevice>& rows, const std::vector<FleetGroup>& groups,
                            const FleetView& view);

}  // namespace memfleet::dashboard

#endif  // MEMFLEET_SERVER_HTTP_DASHBOARD_FLEET_PAGE_H_
