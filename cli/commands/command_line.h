// One `memfleet` subcommand on the command line: each command's file registers its own flags on the app
// and says what runs when the user chose it, so that cli_main only lists the commands.
//
//   CommandLine devices = RegisterDevicesCommand(app);      // adds `devices` and its flags
//   app.parse(argc, argv);
//   if (devices.chosen()) return devices.run(global, std::cout, std::cerr);
#ifndef MEMFLEET_CLI_COMMANDS_COMMAND_LINE_H_
#define MEMFLEET_CLI_COMMANDS_COMMAND_LINE_H_

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "cli/commands/server_command.h"

namespace CLI {
class App;
}  // namespace CLI

namespace memfleet::cli {

struct CommandLine {
  CLI::App* command = nullptr;  // the subcommand, owned by the app
  // `global`: the server options given before the subcommand (`memfleet --server lab:7070 devices`).
  std::function<int(const ServerArgs& global, std::ostream& out, std::ostream& err)> run;

  bool chosen() const;  // after parsing: the user named this subcommand
};

// --server, --json, --csv, --ca-cert, --token and --token-file: on the app itself and on each server
// command, so that they work before the subcommand as well as after it, as in git or kubectl.
void AddServerOptions(CLI::App* command, ServerArgs& args);

// A subcommand NAME of `parent` that asks the server: it takes the server options into `common`.
CLI::App* AddServerCommand(CLI::App* parent, const std::string& name, const std::string& help, ServerArgs& common);

// What runs when a server command is chosen: the global server options under its own, then run(*args).
template <typename Args>
CommandLine ServerCommandLine(CLI::App* command, std::shared_ptr<Args> args,
                              int (*run)(const Args&, std::ostream&, std::ostream&)) {
  return {command, [args, run](const ServerArgs& global, std::ostream& out, std::ostream& err) {
            InheritGlobalOptions(global, args->common);
            return run(*args, out, err);
          }};
}

// --where TERM (repeatable): the devices a command looks at.
void AddWhereOption(CLI::App* command, std::vector<std::string>& where);

// KEY=VALUE options that repeat (--label): each occurrence takes one value.
void AddRepeatedOption(CLI::App* command, const std::string& name, std::vector<std::string>& values,
                       const std::string& help);

}  // namespace memfleet::cli

#endif  // MEMFLEET_CLI_COMMANDS_COMMAND_LINE_H_
