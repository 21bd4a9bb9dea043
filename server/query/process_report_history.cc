#include "server/query/process_report_history.h"

#include <map>
#include <utility>

#include "report/process_figure.h"
#include "report/report_json.h"

namespace memfleet::server {

absl::StatusOr<std::vector<ProcessSnapshot>> ProcessReportHistory(storage::QueryStore& store,
                                                                  const std::string& device_id,
                                                                  const std::string& process_name,
                                                                  const std::string& since, uint32_t limit) {
  // The history's rows (capture, time, pid) come from the figure column every report has.
  absl::StatusOr<std::vector<storage::HistoryRow>> rows =
      store.ProcessHistory(device_id, process_name, "total_kb", since, limit);
  if (!rows.ok()) return rows.status();
  std::vector<ProcessSnapshot> out;
  out.reserve(rows->size());
  // A capture with several pids of the name appears once per pid: its report is read once.
  std::map<std::string, std::optional<report::Report>> reports;
  for (const storage::HistoryRow& row : *rows) {
    auto it = reports.find(row.capture_id);
    if (it == reports.end()) {
      std::optional<report::Report> parsed;
      absl::StatusOr<std::optional<storage::StoredReport>> stored = store.GetReportByCapture(row.capture_id);
      if (!stored.ok()) return stored.status();
      if (stored->has_value()) {
        absl::StatusOr<report::Report> r = report::ReportFromJson((*stored)->report_json);
        if (r.ok()) parsed = *std::move(r);
      }
      it = reports.emplace(row.capture_id, std::move(parsed)).first;
    }
    ProcessSnapshot snapshot{row.capture_id, row.captured_at, row.pid, std::nullopt, row.tier};
    if (it->second) {
      auto p = it->second->processes.find(row.pid);
      if (p != it->second->processes.end()) snapshot.process = p->second;
    }
    out.push_back(std::move(snapshot));
  }
  return out;
}

absl::StatusOr<std::vector<storage::HistoryRow>> ReportFigureHistory(storage::QueryStore& store,
                                                                     const std::string& device_id,
                                                                     const std::string& process_name,
                                                                     const std::string& figure,
                                                                     const std::string& since, uint32_t limit) {
  absl::StatusOr<std::vector<ProcessSnapshot>> history =
      ProcessReportHistory(store, device_id, process_name, since, limit);
  if (!history.ok()) return history.status();
  std::vector<storage::HistoryRow> rows;
  rows.reserve(history->size());
  for (const ProcessSnapshot& s : *history) {
    storage::HistoryRow row;
    row.capture_id = s.capture_id;
    row.captured_at = s.captured_at;
    row.pid = s.pid;
    row.tier = s.tier;
    if (s.process) row.value_kb = report::ProcessFigureValue(*s.process, figure);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace memfleet::server
