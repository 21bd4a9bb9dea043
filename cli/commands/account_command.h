// `memfleet account TREE`: runs the accounting engine offline on a capture tree, or on a live root
// ("/" of this machine, or another folder with --live-root), and prints the report — no server involved.
//
//   AccountArgs args{.root = "tests/data/captures/qcom-sm8450/tree", .json = true};
//   int exit_code = RunAccount(args, std::cout, std::cerr);   // 0 report, 1 not a capture
#ifndef MEMFLEET_CLI_COMMANDS_ACCOUNT_COMMAND_H_
#define MEMFLEET_CLI_COMMANDS_ACCOUNT_COMMAND_H_

#include <optional>
#include <ostream>
#include <string>

#include "common/exit_codes.h"

namespace CLI {
class App;
}  // namespace CLI

namespace memfleet::cli {

struct CommandLine;  // cli/commands/command_line.h (which includes this header, for the exit codes)

struct AccountArgs {
  std::string root;
  bool json = false;
  int top = 20;
  std::string graphics_libs_file;      // "" = built-in list
  std::optional<int> android_version;  // dumpsys view formulas
  std::string save_capture_dir;        // with a live root: also write the capture as a capture tree
  // `root` is not "/" but a running system's root: run its dumpsys/am and write its nodes (--live-root).
  bool live_root = false;
};

int RunAccount(const AccountArgs& args, std::ostream& out, std::ostream& err);

// `memfleet account` and its flags on `app`. Of the global server options only --json applies to it.
CommandLine RegisterAccountCommand(CLI::App& app);

}  // namespace memfleet::cli

#endif  // MEMFLEET_CLI_COMMANDS_ACCOUNT_COMMAND_H_
