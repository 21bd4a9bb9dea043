// `memfleet process DEVICE NAME [--at TIME]`: one process's figures in the device's latest stored report
// (or the latest at or before TIME) — every field of its process object, its dumpsys memtrack values and
// where each came from. A name held by several pids shows each of them.
//
//   ProcessArgs args;
//   args.device_id = "pixel-7";
//   args.process_name = "surfaceflinger";
//   int exit_code = RunProcess(args, std::cout, std::cerr);   // 4: no such process in that report
//
// NAME may be the full name (the cmdline, "/system/bin/surfaceflinger") or, when it picks one process
// of the report, its base name or an end of it ("surfaceflinger").
#ifndef MEMFLEET_CLI_COMMANDS_PROCESS_COMMAND_H_
#define MEMFLEET_CLI_COMMANDS_PROCESS_COMMAND_H_

#include <chrono>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/commands/command_line.h"
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

// The output for one stored report (exposed for tests). `typed_name` is resolved against the report's
// names as ResolveProcessName does (exact, unique base name, unique suffix) and the name used is put in
// *matched_name when given. NotFound when nothing matches, InvalidArgument when several do (both list
// the closest names); DataLoss when report_json is not a report.
// The process names of a stored report's JSON, one per pid (empty when it is not a report).
std::vector<std::string> ProcessNamesInReport(const std::string& report_json);

absl::StatusOr<std::string> RenderProcess(const v1::GetReportResponse& response, const std::string& typed_name,
                                          OutputFormat format, std::string* matched_name = nullptr);

// `memfleet process` and its flags on `app`.
CommandLine RegisterProcessCommand(CLI::App& app);

}  // namespace memfleet::cli

#endif  // MEMFLEET_CLI_COMMANDS_PROCESS_COMMAND_H_
