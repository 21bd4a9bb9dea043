// AgentPhone: one phone of the farm as the `memfleet agents` commands use it, over an Adb: its ABI, pushes,
// the reverse tunnel to the lab server, the access level it grants, and the agent's start, stop and
// state (the shell commands of agents_plan.h). Every method is one or a few adb calls; errors say which.
//
//   AgentPhone phone(adb, "R58M123");
//   absl::StatusOr<std::string> abi = phone.GetProp("ro.product.cpu.abi");
//   AccessLevel access = phone.GainAccess();
#ifndef MEMFLEET_CLI_COMMANDS_AGENT_PHONE_H_
#define MEMFLEET_CLI_COMMANDS_AGENT_PHONE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cli/adb.h"
#include "cli/commands/agents_plan.h"

namespace memfleet::cli {

class AgentPhone {
 public:
  AgentPhone(Adb& adb, std::string serial) : adb_(adb), serial_(std::move(serial)) {}

  const std::string& serial() const { return serial_; }

  // `adb -s SERIAL shell COMMAND`: its output, or an error quoting the output when it exits non-zero.
  absl::StatusOr<std::string> Shell(const std::string& command);
  // The property's value, trailing newline removed ("" when it is not set).
  absl::StatusOr<std::string> GetProp(const std::string& name);
  absl::Status Push(const std::string& local, const std::string& remote);
  // `adb reverse tcp:PORT tcp:PORT`: the phone's 127.0.0.1:PORT reaches the lab host's.
  absl::Status Reverse(int port);
  absl::Status RemoveReverse(int port);

  // Root through `adb root` (a userdebug build), else through `su -c` (a rooted phone), else the shell user.
  AccessLevel GainAccess();
  // For a phone deployed with `adb root`: asks again (an adbd restarted by a reboot runs as shell).
  absl::Status RestoreAccess(AccessLevel access);

  absl::StatusOr<AgentProbe> Probe();
  // `getenforce`, in the words the agent reports (`memfleet devices`): "enforcing", "permissive" or "none"
  // (SELinux disabled); an error when the phone answers anything else.
  absl::StatusOr<std::string> SelinuxMode();
  // The pid of the agent started (or found running).
  absl::StatusOr<int64_t> StartAgent(const PhoneAgentConfig& config);
  // "stopped PID" / "not running".
  absl::StatusOr<std::string> StopAgent(AccessLevel access);

 private:
  absl::StatusOr<AdbResult> RunAdb(std::vector<std::string> args);
  absl::Status AdbOk(std::vector<std::string> args);
  bool ShellIsRoot(const std::string& id_command);

  Adb& adb_;
  std::string serial_;
};

}  // namespace memfleet::cli

#endif  // MEMFLEET_CLI_COMMANDS_AGENT_PHONE_H_
