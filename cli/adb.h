// Adb: how the `memfleet agents` commands talk to phones, as an interface so that the command sequence
// runs against the real `adb` (ProcessAdb, adb_process.h) or anything else that answers like it.
//
//   absl::StatusOr<AdbResult> r = adb.Run({"-s", serial, "shell", "getprop ro.product.cpu.abi"});
//   if (r.ok() && r->exit_code == 0) abi = r->output;
#ifndef MEMFLEET_CLI_ADB_H_
#define MEMFLEET_CLI_ADB_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace memfleet::cli {

struct AdbResult {
  int exit_code = 0;   // adb's own (adb shell passes the phone command's on)
  std::string output;  // stdout and stderr, in order
};

class Adb {
 public:
  virtual ~Adb() = default;
  // `adb ARGS...`. An error only when adb could not be run or did not finish in time; a command that ran
  // and failed is a result with its exit code.
  virtual absl::StatusOr<AdbResult> Run(const std::vector<std::string>& args) = 0;
};

}  // namespace memfleet::cli

#endif  // MEMFLEET_CLI_ADB_H_
