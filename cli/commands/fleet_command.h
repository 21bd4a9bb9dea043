// `memfleet fleet [--metric device.total_kb] [--group-by model] [--where ...] [--process NAME]`: one
// figure of each device's latest stored report, aggregated per group (devices, min, p50, p90, max);
// `--rows` also lists the devices, largest first. process.<figure> metrics need --process NAME.
//
//   FleetArgs args;
//   args.metric = "process.gl_kb";
//   args.process_name = "surfaceflinger";
//   int exit_code = RunFleet(args, std::cout, std::cerr);   // 4: nothing stored matches
#ifndef MEMFLEET_CLI_COMMANDS_FLEET_COMMAND_H_
#define MEMFLEET_CLI_COMMANDS_FLEET_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "cli/commands/command_line.h"
#include "absl/status/statusor.h"
#include "cli/commands/server_command.h"
#include "memfleet/v1/query_service.pb.h"

namespace memfleet::cli {

struct FleetArgs {
  ServerArgs common;
  std::string metric = "device.total_kb";
  std::string group_by = "model";  // model, platform, soc, build
  std::vector<std::string> where;
  std::string process_name;  // for process.<figure>
  bool rows = false;         // also the per-device rows
  bool baseline = false;     // --baseline: each device against the baseline's budget (RunFleetWithBaseline)
  int scheme = 1;            // with --baseline: budget scheme 1 or 2
};

int RunFleet(const FleetArgs& args, std::ostream& out, std::ostream& err);

// The request the flags make, or InvalidArgument naming the bad flag (exposed for tests).
absl::StatusOr<v1::FleetRequest> MakeFleetRequest(const FleetArgs& args);

std::string RenderFleet(const FleetArgs& args, const v1::FleetResponse& response, OutputFormat format);

// `memfleet fleet` and its flags on `app`; with --baseline it runs RunFleetWithBaseline.
CommandLine RegisterFleetCommand(CLI::App& app);

}  // namespace memfleet::cli

#endif  // MEMFLEET_CLI_COMMANDS_FLEET_COMMAND_H_
