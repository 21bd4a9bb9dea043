// `memfleet trend DEVICE [--process NAME] [--metric total_kb] [--since 7d|24h|RFC3339] [--limit N] [--svg FILE]`:
// one process figure (or, without --process, one device figure) over the device's stored captures, as a
// table and a terminal sparkline with min, max and last; --limit keeps the newest N; --svg FILE also
// writes an SVG line chart. A point whose capture answered a sweep or carries labels is marked as the
// dashboard's list of captures marks it ("sweep S · labels: run=1234 · agent labels: rack=7"; JSON and CSV:
// sweep_id, labels, agent_labels).
//
//   TrendArgs args;
//   args.device_id = "pixel-7";
//   args.process_name = "surfaceflinger";
//   args.since = "7d";
//   args.now = fixed_clock_time;   // tests: what "7d" counts back from
//   int exit_code = RunTrend(args, std::cout, std::cerr);   // 4: no history
//
// A name no stored capture has exactly is looked up among the names of the device's latest report: its
// one process with that base name or that end is used (and said on stderr); none or several is an error
// that lists the closest names.
#ifndef MEMFLEET_CLI_COMMANDS_TREND_COMMAND_H_
#define MEMFLEET_CLI_COMMANDS_TREND_COMMAND_H_

#include <chrono>
#include <optional>
#include <ostream>
#include <string>

#include "cli/commands/command_line.h"
#include "cli/commands/server_command.h"
#include "memfleet/v1/query_service.pb.h"

namespace memfleet::cli {

struct TrendArgs {
  ServerArgs common;
  std::string device_id;
  std::string process_name;
  std::string metric = "total_kb";  // a process figure; "process.total_kb" is accepted too
  std::string since;                // "" = everything stored
  std::string svg_path;             // "" = no chart file
  uint32_t limit = 0;               // 0 = every point
  std::optional<std::chrono::system_clock::time_point> now;
};

int RunTrend(const TrendArgs& args, std::ostream& out, std::ostream& err);

// The table, sparkline and summary (or JSON / CSV) of a history, points in time order (exposed for tests).
std::string RenderTrend(const TrendArgs& args, const v1::ProcessHistoryResponse& history, OutputFormat format);

// The SVG chart of the points whose value is known, one polyline vertex each.
std::string RenderTrendSvg(const TrendArgs& args, const v1::ProcessHistoryResponse& history);

// `memfleet trend` and its flags on `app`.
CommandLine RegisterTrendCommand(CLI::App& app);

}  // namespace memfleet::cli

#endif  // MEMFLEET_CLI_COMMANDS_TREND_COMMAND_H_
