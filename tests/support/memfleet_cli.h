// Test support: the build's memfleet CLI run to its end as a user types it, usually against a test's server:
// its exit code and output, or the JSON document of a --json run. Each run's output stays in a file of its
// own in the test's folder (cli-N.log) for a failing test to point at. Header-only.
//
//   MemfleetCli cli(dir, {"--server", server.address()});
//   ProcessRun table = cli.Run({"devices"});                       // table.exit_code, table.output
//   nlohmann::json devices = cli.Json({"devices", "--json"});      // a test failure unless it exits 0
#ifndef MEMFLEET_TESTS_SUPPORT_MEMFLEET_CLI_H_
#define MEMFLEET_TESTS_SUPPORT_MEMFLEET_CLI_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "nlohmann/json.hpp"
#include "tests/support/subprocess.h"
#include "tests/support/test_paths.h"

namespace memfleet::testing {

// The JSON document in a CLI's output: it starts a line of its own, after whatever came first (a sweep's
// progress lines on stderr, which may hold brackets themselves). Null when there is none; discarded when it
// does not parse.
inline nlohmann::json JsonDocument(const std::string& output) {
  size_t start = std::string::npos;
  for (const char open : {'{', '['}) {
    const size_t after_newline = output.find(std::string("\n") + open);
    const size_t line = !output.empty() && output[0] == open ? 0
                        : after_newline == std::string::npos ? after_newline
                                                             : after_newline + 1;
    start = std::min(start, line);
  }
  if (start == std::string::npos) return nlohmann::json();
  return nlohmann::json::parse(output.substr(start), nullptr, /*allow_exceptions=*/false);
}

class MemfleetCli {
 public:
  MemfleetCli() = default;
  // `global_args` come first on every command line (typically {"--server", address}); a run still going
  // after `timeout` is killed and counts as exit code -1.
  explicit MemfleetCli(std::string log_dir, std::vector<std::string> global_args = {},
                       std::chrono::seconds timeout = std::chrono::seconds(120))
      : log_dir_(std::move(log_dir)), global_args_(std::move(global_args)), timeout_(timeout) {}

  // bin/memfleet with the global arguments and `args`, in `cwd` (the test's own when "").
  ProcessRun Run(const std::vector<std::string>& args, const std::string& cwd = "") {
    std::vector<std::string> argv = {Bin("memfleet")};
    argv.insert(argv.end(), global_args_.begin(), global_args_.end());
    argv.insert(argv.end(), args.begin(), args.end());
    return RunToExit(argv, log_dir_ + "/cli-" + std::to_string(++runs_) + ".log", timeout_, cwd);
  }

  // The document a --json run printed (JsonDocument); a test failure, and null, unless it exited 0.
  nlohmann::json Json(const std::vector<std::string>& args) {
    ProcessRun run = Run(args);
    EXPECT_EQ(run.exit_code, 0) << run.output;
    if (run.exit_code != 0) return nlohmann::json();
    return JsonDocument(run.output);
  }

 private:
  std::string log_dir_;
  std::vector<std::string> global_args_;
  std::chrono::seconds timeout_{120};
  int runs_ = 0;
};

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_MEMFLEET_CLI_H_
