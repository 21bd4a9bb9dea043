// The readable form of a report for a terminal: device breakdown, top processes, the dumpsys view and
// its difference from the device's own dumpsys text, warnings last.
//
//   std::cout << RenderReportTable(report, {.top_processes = 20});
#ifndef MEMFLEET_CLI_REPORT_TABLE_H_
#define MEMFLEET_CLI_REPORT_TABLE_H_

#include <string>
#include <vector>

#include "report/report.h"

namespace memfleet::cli {

struct TableOptions {
  int top_processes = 20;  // <= 0: all
  int max_warnings = 20;   // <= 0: all
};

std::string RenderReportTable(const report::Report& report, const TableOptions& options = {});

// The processes as the table lists them: by total_kb, largest first (unknown totals last), the first
// `top` of them (<= 0: all). `report --csv` keeps the same rows, so --top means one thing in both.
std::vector<const report::ProcessReport*> ProcessesByTotal(const report::Report& report, int top);

}  // namespace memfleet::cli

#endif  // MEMFLEET_CLI_REPORT_TABLE_H_
