// ProcessAdb: the real Adb, running the `adb` program ($ADB, else `adb` on PATH) as a child process.
//
//   ProcessAdb adb(AdbProgram());
//   absl::StatusOr<AdbResult> devices = adb.Run({"devices"});
#ifndef MEMFLEET_CLI_ADB_PROCESS_H_
#define MEMFLEET_CLI_ADB_PROCESS_H_

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "cli/adb.h"

namespace memfleet::cli {

// $ADB when set and not empty, else "adb" (found on PATH).
std::string AdbProgram();

class ProcessAdb : public Adb {
 public:
  static constexpr size_t kMaxAdbOutputBytes = 16u << 20;

  // A call that runs longer than `timeout` is killed (a phone that stopped answering must not hang a
  // farm-wide command), and so is one that prints more than `max_output_bytes` (a phone's file or a
  // hostile adb must not fill the lab host's memory: no call the CLI makes needs more).
  explicit ProcessAdb(std::string program, std::chrono::seconds timeout = std::chrono::seconds(120),
                      size_t max_output_bytes = kMaxAdbOutputBytes);

  // stdin is /dev/null; stdout and stderr are read together. Unavailable when the program cannot be
  // started, DeadlineExceeded on a timeout, ResourceExhausted past max_output_bytes.
  absl::StatusOr<AdbResult> Run(const std::vector<std::string>& args) override;

 private:
  std::string program_;
  std::chrono::seconds timeout_;
  size_t max_output_bytes_;
};

}  // namespace memfleet::cli

#endif  // MEMFLEET_CLI_ADB_PROCESS_H_
