// A process's figures over time that the store keeps no column for — its heaps and App Summary
// (docs/accounting.md section 8) — read from the stored report of each capture in its history. The
// trend of `app_summary.*` / `heaps.*` (GetProcessHistory) and the dashboard's stacked chart use it.
//
//   absl::StatusOr<std::vector<ProcessSnapshot>> h = ProcessReportHistory(store, "pixel-1", "system_server", "", 0);
//   for (const ProcessSnapshot& s : *h) if (s.process && s.process->app_summary) ...
//
// Each point costs one stored report read (and decompressed): bound it with `since` and `limit` as for
// any history (docs/performance.md, "Heaps"). Thread-safe when the store is.
#ifndef MEMFLEET_SERVER_QUERY_PROCESS_REPORT_HISTORY_H_
#define MEMFLEET_SERVER_QUERY_PROCESS_REPORT_HISTORY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "report/report.h"
#include "storage/query_store.h"

namespace memfleet::server {

// One capture of the process: its row of the history and, when the stored report could be read, the
// process's figures in it (the pid of the row).
struct ProcessSnapshot {
  std::string capture_id;
  std::string captured_at;
  int pid = 0;
  std::optional<report::ProcessReport> process;
  std::string tier;  // stored with the capture: "kernel", "dumpsys"; "" unknown
};

// The captures of the process's history (as ProcessHistory lists them: oldest first, one per pid),
// each with its process figures from the stored report. `since` "" = all; limit 0 = all.
absl::StatusOr<std::vector<ProcessSnapshot>> ProcessReportHistory(storage::QueryStore& store,
                                                                  const std::string& device_id,
                                                                  const std::string& process_name,
                                                                  const std::string& since, uint32_t limit);

// One figure's history (report::ProcessFigureValue names) through ProcessReportHistory, in
// ProcessHistory's rows.
absl::StatusOr<std::vector<storage::HistoryRow>> ReportFigureHistory(storage::QueryStore& store,
                                                                     const std::string& device_id,
                                                                     const std::string& process_name,
                                                                     const std::string& figure,
                                                                     const std::string& since, uint32_t limit);

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_QUERY_PROCESS_REPORT_HISTORY_H_
