// `memfleet process DEVICE NAME [--at TIME]`: one process's figures in the device's latest stored report
// (or the latest at or before TIME) — every field of its process object, its dumpsys memtrack values and
// where each came from. A name held by several pids shows each of them.
//
//   ProcessArgs args;
//   args.device_id = "pixel-7";
//   args.process_name = "surfaceflinger";
//   int exit_code = RunProcess(args, std::cout, std::cerr);   // 4: no such process in that report
#ifndef MEMFLEET_CLI_COMMANDS_PROCESS_COMMAND_H_
#define MEMFLEET_CLI_COMMANDS_PROCESS_COMMAND_H_

#include <chrono>
#include <optional>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "cli/commands/server_command.h"
#include "memfleet/v1/query_service.pb.h"

namespace memfleet::cli {

struct ProcessArgs {
  ServerArgs common;
  std::string device_id;
  std::string process_name;
  std::string at;  // "" = latest
  std::optional<std::chrono::system_clock::time_point> now;
};

int RunProcess(const ProcessArgs& args, std::ostream& out, std::ostream& err);

// The output for one stored report (exposed for tests). NotFound when no process has that name;
// DataLoss when report_json is not a report.
absl::StatusOr<std::string> RenderProcess(const v1::GetReportResponse& response, const std::string& process_name,
                                          OutputFormat format);

}  // namespace memfleet::cli

#endif  // MEMFLEET_CLI_COMMANDS_PROCESS_COMMAND_H_
