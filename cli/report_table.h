// The readable form of a report for a terminal: device breakdown, top processes, the dumpsys view and
// its difference from the device's own dumpsys text, warnings last.
//
//   std::cout << RenderReportTable(report, {.top_processes = 20});
#ifndef MEMFLEET_CLI_REPORT_TABLE_H_
#define MEMFLEET_CLI_REPORT_TABLE_H_

#include <string>

#include "report/report.h"

namespace memfleet::cli {

struct TableOptions {
  int top_processes = 20;  // <= 0: all
  int max_warnings = 20;   // <= 0: all
};

std::string RenderReportTable(const report::Report& report, const TableOptions& options = {});

}  // namespace memfleet::cli

#endif  // MEMFLEET_CLI_REPORT_TABLE_H_
