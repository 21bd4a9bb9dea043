// `memfleet baseline import FILE | show [--version N] | check [--scheme 1|2] [--sweep ID | --since 24h]
// [--where ...]` and `memfleet regressions --process NAME [--build A --vs B] [--model M]`: memory
// baselines (docs/baselines.md) on the lab server. `check` exits 3 when anything is over budget and
// `regressions` exits 3 when a change is flagged, so both serve as CI gates; 0 when all is within.
//
//   BaselineCheckArgs args;
//   args.scheme = 2;
//   args.since = "24h";
//   int exit_code = RunBaselineCheck(args, std::cout, std::cerr);   // 3: over budget
#ifndef MEMFLEET_CLI_COMMANDS_BASELINE_COMMAND_H_
#define MEMFLEET_CLI_COMMANDS_BASELINE_COMMAND_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/commands/command_line.h"
#include "absl/status/statusor.h"
#include "cli/commands/fleet_command.h"
#include "cli/commands/server_command.h"
#include "memfleet/v1/baseline_service.pb.h"

namespace memfleet::cli {

struct BaselineImportArgs {
  ServerArgs common;
  std::string file;
};

struct BaselineShowArgs {
  ServerArgs common;
  int64_t version = 0;  // 0 = the latest
};

struct BaselineCheckArgs {
  ServerArgs common;
  int scheme = 1;
  bool allow_unchecked = false;  // budgets no device could check do not fail the check (exit 0, not 5)
  std::string sweep_id;
  std::string since;  // a span back (24h) or RFC 3339; "" = each device's latest
  std::vector<std::string> where;
  int64_t version = 0;
  std::optional<std::chrono::system_clock::time_point> now;  // tests fix the clock
};

struct RegressionsArgs {
  ServerArgs common;
  std::string process_name;
  std::string build_a;
  std::string build_b;
  std::string model;
  std::string since;  // "7d", "24h" or RFC 3339; "" = all stored reports
  std::vector<std::string> where;
  std::optional<std::chrono::system_clock::time_point> now;  // tests fix the clock
};

int RunBaselineImport(const BaselineImportArgs& args, std::ostream& out, std::ostream& err);
int RunBaselineShow(const BaselineShowArgs& args, std::ostream& out, std::ostream& err);
int RunBaselineCheck(const BaselineCheckArgs& args, std::ostream& out, std::ostream& err);
int RunRegressions(const RegressionsArgs& args, std::ostream& out, std::ostream& err);

// The request the flags make, or InvalidArgument naming the bad flag (exposed for tests).
absl::StatusOr<v1::CheckBaselineRequest> MakeCheckRequest(const BaselineCheckArgs& args);
std::string RenderCheck(const v1::CheckBaselineResponse& response, OutputFormat format);
std::string RenderRegressions(const v1::RegressionsResponse& response, OutputFormat format);

// `memfleet fleet --baseline`: the fleet rows of a process figure beside the budget the latest baseline
// gives that process under `scheme` (graphics_dma_kb, non_graphics_kb, or total_kb against a target total).
int RunFleetWithBaseline(const FleetArgs& args, int scheme, std::ostream& out, std::ostream& err);

// `memfleet baseline import|show|check` and `memfleet regressions` with their flags on `app`.
std::vector<CommandLine> RegisterBaselineCommands(CLI::App& app);

}  // namespace memfleet::cli

#endif  // MEMFLEET_CLI_COMMANDS_BASELINE_COMMAND_H_
