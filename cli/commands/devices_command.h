// `memfleet devices [--where KEY=VALUE ...] [--retired]`: the devices the server knows, online or not, with
// their last stored capture; and `memfleet devices retire`.
//
//   DevicesArgs args;
//   args.common.server = "127.0.0.1:7070";
//   int exit_code = RunDevices(args, std::cout, std::cerr);   // 0 listed, 1 server error, 2 usage
#ifndef MEMFLEET_CLI_COMMANDS_DEVICES_COMMAND_H_
#define MEMFLEET_CLI_COMMANDS_DEVICES_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "cli/commands/command_line.h"
#include "cli/commands/server_command.h"
#include "memfleet/v1/query_service.pb.h"

namespace memfleet::cli {

struct DevicesArgs {
  ServerArgs common;
  std::vector<std::string> where;
  bool retired = false;  // --retired: the devices `devices retire` took out, instead of the active ones
};

int RunDevices(const DevicesArgs& args, std::ostream& out, std::ostream& err);

// `memfleet devices retire DEVICE [--purge]` (an admin token): the device leaves `devices`, `fleet`, the
// dashboard and /metrics, its history stays readable by its id (or, with --purge, is deleted); its agent
// connecting again makes it active again. 0 done, 4 unknown device, 2 refused (its agent is online), 1
// server error.
struct DevicesRetireArgs {
  ServerArgs common;
  std::string device_id;
  bool purge = false;
};

int RunDevicesRetire(const DevicesRetireArgs& args, std::ostream& out, std::ostream& err);

// The devices table / JSON array / CSV of a ListDevices answer (exposed for tests). filtered: the answer
// is for --where terms, so an empty table says that nothing matched rather than that no device is known;
// retired: it lists the retired devices (--retired).
std::string RenderDevices(const v1::ListDevicesResponse& response, OutputFormat format, bool filtered,
                          bool retired = false);

// `memfleet devices` and its flags on `app`.
CommandLine RegisterDevicesCommand(CLI::App& app);

}  // namespace memfleet::cli

#endif  // MEMFLEET_CLI_COMMANDS_DEVICES_COMMAND_H_
