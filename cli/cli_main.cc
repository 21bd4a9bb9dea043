// memfleet: the user's tool. Only wires the command line to the commands; each command registers its own
// flags (cli/commands/command_line.h).
#include <iostream>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "cli/commands/account_command.h"
#include "cli/commands/agents_cli.h"
#include "cli/commands/baseline_command.h"
#include "cli/commands/command_line.h"
#include "cli/commands/devices_command.h"
#include "cli/commands/fleet_command.h"
#include "cli/commands/process_command.h"
#include "cli/commands/report_command.h"
#include "cli/commands/sweep_command.h"
#include "cli/commands/trend_command.h"
#include "common/exit_codes.h"
#include "common/version.h"

int main(int argc, char** argv) {
  using namespace memfleet::cli;
  CLI::App app{
      "memfleet: memory accounting for Android device farms. Figures are in kB, meaning KiB (1,024 "
      "bytes), as the kernel and dumpsys count them. Exit codes: README \"Exit codes\"."};
  app.set_version_flag("--version", std::string("memfleet ") + memfleet::Version());
  app.require_subcommand(1);
  // Given before the subcommand (`memfleet --server lab:7070 devices`), as in git or kubectl.
  ServerArgs global;
  AddServerOptions(&app, global);
  std::vector<CommandLine> commands = {
      RegisterAccountCommand(app), RegisterDevicesCommand(app), RegisterSweepCommand(app), RegisterReportCommand(app),
      RegisterProcessCommand(app), RegisterTrendCommand(app),   RegisterFleetCommand(app)};
  for (CommandLine& baseline : RegisterBaselineCommands(app)) commands.push_back(std::move(baseline));
  commands.push_back(RegisterAgentsCommands(app));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return memfleet::UsageExitCode(app.exit(e));
  }
  for (CommandLine& command : commands) {
    if (command.chosen()) return command.run(global, std::cout, std::cerr);
  }
  return memfleet::kExitUsage;
}
