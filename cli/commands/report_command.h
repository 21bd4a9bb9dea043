// `memfleet report DEVICE [--at TIME] [--label KEY=VALUE ...]`: a stored report from the server — the
// latest (carrying the labels, docs/labels.md), or the latest at or before TIME (RFC 3339, or a span back from now such
// as 24h) — as the table of `memfleet account`, the report JSON (--json) or one CSV row per process (--csv).
//
//   ReportArgs args;
//   args.device_id = "pixel-7";
//   args.at = "2026-12-02T16:00:00Z";
//   int exit_code = RunReport(args, std::cout, std::cerr);   // 4: unknown device / nothing stored
#ifndef MEMFLEET_CLI_COMMANDS_REPORT_COMMAND_H_
#define MEMFLEET_CLI_COMMANDS_REPORT_COMMAND_H_

#include <chrono>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/commands/command_line.h"
#include "cli/commands/server_command.h"
#include "report/report.h"

namespace memfleet::cli {

struct ReportArgs {
  ServerArgs common;
  std::string device_id;
  std::string at;                         // "" = latest
  std::string capture_id;                 // exact capture; wins over `at` and `labels`
  std::vector<std::string> labels;        // --label KEY=VALUE: the latest capture carrying all of them (its sweep's)
  std::vector<std::string> agent_labels;  // --agent-label KEY=VALUE: ... and all of these from its agent
  // --top: the processes of the table and of --csv, largest total first; 0 = all. Unset: 20 in the table,
  // all in CSV (a script exporting a report gets every process unless it asks for fewer).
  std::optional<int> top;
  std::optional<std::chrono::system_clock::time_point> now;  // for a relative --at; nullopt = clock
};

int RunReport(const ReportArgs& args, std::ostream& out, std::ostream& err);

// The dumpsys view's figures of a process (the report JSON's dumpsys.processes.<pid>) as CSV columns,
// named alike in `report --csv` and `process --csv`: the JSON's names (docs/capture-format.md), but
// total_pss_kb (dumpsys' TOTAL PSS) as dumpsys_total_pss_kb, so it is not taken for memfleet's pss_kb.
struct DumpsysCsvColumn {
  const char* json_field;
  const char* csv_column;
};
inline constexpr DumpsysCsvColumn kDumpsysCsvColumns[] = {
    {"gl_mtrack_kb", "gl_mtrack_kb"}, {"egl_mtrack_kb", "egl_mtrack_kb"}, {"total_pss_kb", "dumpsys_total_pss_kb"}};

// --csv: a header and one row per process with every figure of the report's process objects, in the
// table's order (total_kb, largest first), the first `top` of them (<= 0: all).
std::string RenderProcessesCsv(const report::Report& report, int top = 0);

// `memfleet report` and its flags on `app`.
CommandLine RegisterReportCommand(CLI::App& app);

}  // namespace memfleet::cli

#endif  // MEMFLEET_CLI_COMMANDS_REPORT_COMMAND_H_
