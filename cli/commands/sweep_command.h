// `memfleet sweep [--where KEY=VALUE ...] [--label KEY=VALUE ...] [--deadline S] [--full-smaps]`: asks every matching
// online device for a capture now (with --full-smaps, one that reads full smaps for every process), follows the sweep
// (a redrawn bar on a terminal, plain lines otherwise, on `err`), then prints the swept devices ranked by total_kb from
// their new reports; devices that failed, were offline or timed out are listed under the table.
//
//   SweepArgs args;
//   args.where = {"platform=qcom"};
//   args.progress_tty = isatty(STDERR_FILENO);
//   int exit_code = RunSweep(args, std::cout, std::cerr);   // 4: no device matches
#ifndef MEMFLEET_CLI_COMMANDS_SWEEP_COMMAND_H_
#define MEMFLEET_CLI_COMMANDS_SWEEP_COMMAND_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "cli/commands/command_line.h"
#include "cli/commands/server_command.h"
#include "report/report.h"

namespace memfleet::cli {

struct SweepArgs {
  ServerArgs common;
  std::vector<std::string> where;
  std::vector<std::string> labels;  // --label KEY=VALUE: on every capture the sweep stores
  uint32_t deadline_s = 60;         // devices that have not stored a capture by then are reported as timed out
  bool full_smaps = false;          // every device reads full smaps for every process: heaps and App Summary for all
  bool progress_tty = false;        // err is a terminal: redraw one progress line
};

int RunSweep(const SweepArgs& args, std::ostream& out, std::ostream& err);

// One swept device: its new report's headline figures, or why there is none.
struct SweptDevice {
  std::string device_id;
  std::string model;
  std::string platform;
  std::string state;    // "stored", "failed", "offline", "timed out", ...
  std::string message;  // why it has no report
  std::string capture_id;
  std::string captured_at;
  report::Kb total_kb;
  report::Kb processes_kb;
  report::Kb kernel_kb;
  report::Kb static_reserved_kb;
  std::string top_process;
  report::Kb top_process_total_kb;
  bool has_report = false;
};

// Fills the figures of `device` from its report. The top process is the largest by total_kb among those
// the device total counts (not cached).
void FillFromReport(const report::Report& report, SweptDevice& device);

// Devices with a report ranked by total_kb (unknown last), then the others under the table (exposed for
// tests).
std::string RenderSweepResult(const std::string& sweep_id, std::vector<SweptDevice> devices, OutputFormat format);

// `memfleet sweep` and its flags on `app` (a terminal on stderr gets the redrawn progress line).
CommandLine RegisterSweepCommand(CLI::App& app);

}  // namespace memfleet::cli

#endif  // MEMFLEET_CLI_COMMANDS_SWEEP_COMMAND_H_
