// Where a process's memory is, as `memfleet process` prints it (docs/accounting.md section 8): its heaps
// in the shape of `dumpsys meminfo <pid>` — the vendor's GL/EGL mtrack rows replaced by memfleet's GL and
// DMA-BUF — then the App Summary and DMA-BUF by exporter.
//
//   std::string text = RenderProcessBreakdown(process);   // "" when the report has no heaps for it
//
// Pure.
#ifndef MEMFLEET_CLI_PROCESS_BREAKDOWN_TABLE_H_
#define MEMFLEET_CLI_PROCESS_BREAKDOWN_TABLE_H_

#include <string>

#include "report/report.h"

namespace memfleet::cli {

// The heaps table, the App Summary and the DMA-BUF split, indented by two; a line saying why when the
// process has no heaps (a capture without full smaps).
std::string RenderProcessBreakdown(const report::ProcessReport& process);

}  // namespace memfleet::cli

#endif  // MEMFLEET_CLI_PROCESS_BREAKDOWN_TABLE_H_
