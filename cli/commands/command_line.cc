#include "cli/commands/command_line.h"

#include "CLI/CLI.hpp"
#include "cli/commands/server_command.h"

namespace memfleet::cli {

bool CommandLine::chosen() const { return command != nullptr && command->parsed(); }

void AddServerOptions(CLI::App* command, ServerArgs& args) {
  command->add_option("--server", args.server, "memfleet-server to ask, HOST:PORT (default: $MEMFLEET_SERVER)");
  command->add_flag("--json", args.json, "print JSON instead of the table");
  command->add_flag("--csv", args.csv, "print CSV (RFC 4180) instead of the table");
  command->add_option("--ca-cert", args.ca_cert,
                      "PEM CA of the server's certificate: TLS (default: $MEMFLEET_CA_CERT)");
  command->add_option("--token", args.token, "read or admin token (default: --token-file, else $MEMFLEET_TOKEN)");
  command->add_option("--token-file", args.token_file, "file holding the token");
}

CLI::App* AddServerCommand(CLI::App* parent, const std::string& name, const std::string& help, ServerArgs& common) {
  CLI::App* command = parent->add_subcommand(name, help);
  AddServerOptions(command, common);
  return command;
}

void AddWhereOption(CLI::App* command, std::vector<std::string>& where) {
  AddRepeatedOption(command, "--where", where,
                    "select devices: KEY=VALUE with KEY model, platform, soc, device_id or build (VALUE* = prefix), "
                    "tier (kernel or dumpsys: its latest capture's, else its agent's), "
                    "or label.NAME (captures carrying label NAME=VALUE from their sweep) or agentlabel.NAME (from "
                    "their agent); repeat to AND");
}

void AddRepeatedOption(CLI::App* command, const std::string& name, std::vector<std::string>& values,
                       const std::string& help) {
  command->add_option(name, values, help)->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

}  // namespace memfleet::cli
