// `memfleet agents deploy|status|stop|logs|supervise`: puts memfleet-agent on the farm's phones over adb and
// keeps it running (docs/deploy.md). Runs on the lab host; every phone reaches the lab server through
// `adb reverse` on its own 127.0.0.1, so the phones need no network.
//
//   ProcessAdb adb(AdbProgram());
//   AgentsDeployArgs args;  args.target.all = true;  args.server_port = 7070;
//   int exit_code = RunAgentsDeploy(args, adb, std::cout, std::cerr);   // 0 every phone up (common/exit_codes.h)
#ifndef MEMFLEET_CLI_COMMANDS_AGENTS_COMMAND_H_
#define MEMFLEET_CLI_COMMANDS_AGENTS_COMMAND_H_

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/adb.h"
#include "cli/commands/server_command.h"
#include "common/exit_codes.h"

namespace memfleet::cli {

// Which phones: --serial S (repeatable) or --all (every phone `adb devices` lists).
struct AgentsTarget {
  std::vector<std::string> serials;
  bool all = false;
};

struct AgentsDeployArgs {
  AgentsTarget target;
  int server_port = 0;              // the lab server's port; the phones reach it at 127.0.0.1:PORT
  std::string phone_server;         // or the address the phones dial themselves (no adb reverse)
  uint32_t interval_s = 300;        // agent --interval
  std::string token_dir;            // DIR/<device id>.token per phone, made by hand
  bool mint_tokens = false;         // or one minted per phone on the server (an admin token in query)
  bool rotate_tokens = false;       // minting a new one even for a phone whose token is valid, revoking that
  std::string name_map_file;        // lines "SERIAL NAME": the device id of each phone named there
  std::vector<std::string> labels;  // "K=V": the agents' labels, on every capture they send
  std::string agent_dir;    // holds build-agent-arm64/ and build-agent-x86_64/; "": the packaged agents, else "."
  std::string arm64_agent;  // override the binary of one ABI
  std::string x86_64_agent;
  uint32_t confirm_timeout_s = 60;  // how long to wait for the server to see each agent online
  // Deploy even to a server that answers calls without a token: through adb reverse, every app on every
  // phone could then reach it. Refused otherwise (CheckServerNeedsTokens).
  bool insecure_no_tokens = false;
  ServerArgs query;  // where to ask whether the agents connected (default 127.0.0.1:PORT)
};

struct AgentsStatusArgs {
  AgentsTarget target;  // neither given: every phone
  ServerArgs query;     // default: 127.0.0.1:PORT of the port deploy used
};

struct AgentsLogsArgs {
  std::string serial;
  uint32_t lines = 50;
};

struct AgentsSuperviseArgs {
  AgentsTarget target;  // neither given: every phone
  bool once = false;
  uint32_t every_s = 60;
};

// OK when the server at the query's address (default 127.0.0.1:PORT) refuses a call made without a
// token. `adb reverse` puts the server's port on each phone's 127.0.0.1, where every app may open it, so
// loopback is no trust boundary for it: FailedPrecondition saying why when the server answers without a
// token, Unavailable when it cannot be asked (nobody can tell then).
absl::Status CheckServerNeedsTokens(ServerArgs query, int server_port);

int RunAgentsDeploy(const AgentsDeployArgs& args, Adb& adb, std::ostream& out, std::ostream& err);
int RunAgentsStatus(const AgentsStatusArgs& args, Adb& adb, std::ostream& out, std::ostream& err);
int RunAgentsStop(const AgentsTarget& target, Adb& adb, std::ostream& out, std::ostream& err);
int RunAgentsLogs(const AgentsLogsArgs& args, Adb& adb, std::ostream& out, std::ostream& err);
int RunAgentsSupervise(const AgentsSuperviseArgs& args, Adb& adb, std::ostream& out, std::ostream& err);

// A phone to act on, and why it cannot be used ("" when it can: listed by adb devices as "device").
struct SelectedPhone {
  std::string serial;
  std::string unusable;
};

// The phones asked for (--serial, each whether listed or not), or with --all (or neither, when
// default_all) every phone `adb devices` lists, usable or not: every command shows each in its table.
// InvalidArgument when nothing was asked for and !default_all; Unavailable when adb cannot list phones.
absl::StatusOr<std::vector<SelectedPhone>> SelectPhones(const AgentsTarget& target, bool default_all, Adb& adb);

// An agents command's exit code (common/exit_codes.h) after acting on `phones`, `failed` of which it could not
// serve: 0 none failed, 5 some, 1 all, 4 there was no phone at all.
int AgentsExitCode(size_t phones, size_t failed);

}  // namespace memfleet::cli

#endif  // MEMFLEET_CLI_COMMANDS_AGENTS_COMMAND_H_
