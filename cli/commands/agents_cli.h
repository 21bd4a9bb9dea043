// The `memfleet agents …` subcommands on the command line: their flags, and the real adb behind them.
//
//   CommandLine agents = RegisterAgentsCommands(app);   // before app.parse()
//   if (agents.chosen()) return agents.run(global, std::cout, std::cerr);
#ifndef MEMFLEET_CLI_COMMANDS_AGENTS_CLI_H_
#define MEMFLEET_CLI_COMMANDS_AGENTS_CLI_H_

#include <ostream>

#include "CLI/CLI.hpp"
#include "cli/commands/agents_command.h"
#include "cli/commands/command_line.h"

namespace memfleet::cli {

class AgentsCli {
 public:
  explicit AgentsCli(CLI::App* app);

  bool chosen() const { return agents_->parsed(); }
  CLI::App* command() const { return agents_; }
  // Runs the chosen subcommand with `adb` ($ADB, else on PATH). `global`: the server options given before
  // `agents` (--server, --token, --token-file, --ca-cert), for the questions deploy and status ask.
  int Run(const ServerArgs& global, std::ostream& out, std::ostream& err);

 private:
  CLI::App* agents_;
  CLI::App* deploy_;
  CLI::App* status_;
  CLI::App* stop_;
  CLI::App* logs_;
  CLI::App* supervise_;
  AgentsDeployArgs deploy_args_;
  AgentsStatusArgs status_args_;
  AgentsTarget stop_target_;
  AgentsLogsArgs logs_args_;
  AgentsSuperviseArgs supervise_args_;
};

// `memfleet agents deploy|status|stop|logs|supervise` and their flags on `app`.
CommandLine RegisterAgentsCommands(CLI::App& app);

}  // namespace memfleet::cli

#endif  // MEMFLEET_CLI_COMMANDS_AGENTS_CLI_H_
