// What the server commands (devices, sweep, report, process, trend, fleet) share: the --server /
// --json / --csv flags, their exit codes, and printing a failure.
//
//   absl::StatusOr<OutputFormat> format = OutputFormatOf(args.common);       // --json and --csv: usage
//   if (!client.ok()) return PrintFailure(client.status(), err);             // exit code by status code
#ifndef MEMFLEET_CLI_COMMANDS_SERVER_COMMAND_H_
#define MEMFLEET_CLI_COMMANDS_SERVER_COMMAND_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cli/commands/account_command.h"
#include "common/exit_codes.h"  // every command's exit codes: one table
#include "cli/output_format.h"
#include "cli/server_client.h"

namespace memfleet::cli {

struct ServerArgs {
  std::string server;                     // --server HOST:PORT; "" = $MEMFLEET_SERVER
  std::optional<std::string> env_server;  // tests: stands in for $MEMFLEET_SERVER (nullopt: read it)
  // Security (docs/security.md): --ca-cert FILE (else $MEMFLEET_CA_CERT) turns TLS on; the token is
  // --token, else the contents of --token-file, else $MEMFLEET_TOKEN.
  std::string ca_cert;
  std::string token;
  std::string token_file;
  std::optional<std::string> env_ca_cert;  // tests: stand in for the environment (nullopt: read it)
  std::optional<std::string> env_token;
  bool json = false;
  bool csv = false;
};

// The options given before the subcommand (`memfleet --server lab:7070 devices`) under those given after
// it: each one `args` does not set is taken from `global`.
void InheritGlobalOptions(const ServerArgs& global, ServerArgs& args);

// True when any option a person can type is set (--server, --ca-cert, --token, --token-file, --json,
// --csv): for commands that take none of them.
bool AnyOptionSet(const ServerArgs& args);

// kTable unless --json or --csv; both at once is InvalidArgument.
absl::StatusOr<OutputFormat> OutputFormatOf(const ServerArgs& args);

// The CA and token the flags and the environment name (files read here); InvalidArgument when a file
// cannot be read.
absl::StatusOr<ClientSecurity> ClientSecurityOf(const ServerArgs& args);

// A client for --server / $MEMFLEET_SERVER, or InvalidArgument saying how to name the server.
absl::StatusOr<std::unique_ptr<ServerClient>> ConnectToServer(const ServerArgs& args);

// 2 for InvalidArgument, 4 for NotFound, 1 for everything else.
int ExitCodeFor(const absl::Status& status);

// Prints the message (prefixed "memfleet <command>: " unless it already starts with "memfleet") and
// returns ExitCodeFor(status).
int PrintFailure(const absl::Status& status, const std::string& command, std::ostream& err);

// Seconds since the epoch: `now` when a test fixes it, else the system clock.
int64_t NowUnixSeconds(const std::optional<std::chrono::system_clock::time_point>& now);

}  // namespace memfleet::cli

#endif  // MEMFLEET_CLI_COMMANDS_SERVER_COMMAND_H_
