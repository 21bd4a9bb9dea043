// The baselines page (GET /baselines): the latest imported baseline checked against each device's latest
// report, as `memfleet baseline check` does — the budgets some device is over first (by how much, on how
// many devices, the worst device), then those every device is within.
//
//   BaselinesPageInput in = ...;   // from the baseline check (server/query/baseline_service.h)
//   std::string html = RenderBaselinesPage(in);
//
// Pure; thread-safe.
#ifndef MEMFLEET_SERVER_HTTP_DASHBOARD_BASELINES_PAGE_H_
#define MEMFLEET_SERVER_HTTP_DASHBOARD_BASELINES_PAGE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace memfleet::dashboard {

// One budget on the devices of one model and build.
struct BaselineBudgetRow {
  std::string model;
  std::string build;
  std::string department;
  std::string process;  // "" = the department as a whole
  std::string budget;   // graphics_dma_kb, non_graphics_kb or target_total_kb
  int64_t budget_kb = 0;
  uint32_t devices_checked = 0;
  uint32_t devices_over = 0;
  uint32_t devices_unknown = 0;
  int64_t worst_value_kb = 0;  // valid when devices_checked > 0
  int64_t worst_over_kb = 0;   // worst_value_kb - budget_kb; negative: headroom
  std::string worst_device;
};

struct BaselinesPageInput {
  std::string absent;  // non-empty: why there is no check to show (no baseline imported, no report)
  std::string name;
  int64_t version = 0;
  uint32_t scheme = 1;
  uint32_t devices = 0;
  uint32_t devices_not_applicable = 0;
  std::vector<BaselineBudgetRow> rows;
  size_t unbudgeted = 0;  // processes the scheme gives no budget
};

std::string RenderBaselinesPage(const BaselinesPageInput& in);

}  // namespace memfleet::dashboard

#endif  // MEMFLEET_SERVER_HTTP_DASHBOARD_BASELINES_PAGE_H_
