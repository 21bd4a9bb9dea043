// The pure side of `memfleet agents …` (docs/deploy.md): which binary a phone's ABI takes, the device id
// a serial becomes, the agent's settings file on the phone, and the exact shell commands run there over
// `adb shell`. Text in, text out; running them is agent_phone.h's job.
//
//   absl::StatusOr<std::string> binary = AgentBinaryForAbi("arm64-v8a", AgentBinariesIn("."));
//   std::string start = StartAgentCommand(config);   // prints "started PID" or "running PID"
#ifndef MEMFLEET_CLI_COMMANDS_AGENTS_PLAN_H_
#define MEMFLEET_CLI_COMMANDS_AGENTS_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "capture/labels.h"

namespace memfleet::cli {

// Everything the agent needs on a phone lives here: shell and root may both write it, and it survives
// reboots.
inline constexpr char kPhoneAgentDir[] = "/data/local/tmp/memfleet";

// The most of agent.log `agents logs` asks a phone for (its last bytes).
inline constexpr size_t kAgentLogTailBytes = 4u << 20;

// The static agents of scripts/build-agent, one per ABI memfleet builds.
struct AgentBinaries {
  std::string arm64;   // for arm64-v8a phones
  std::string x86_64;  // for x86_64 phones (emulators, Chromebooks)
};

// DIR/build-agent-arm64/bin/memfleet-agent and DIR/build-agent-x86_64/bin/memfleet-agent.
AgentBinaries AgentBinariesIn(const std::string& dir);

// Where the memfleet-agents package puts them, relative to the folder of the running memfleet
// (/usr/bin -> /usr/share/memfleet/agents/<abi>/memfleet-agent; packaging/CMakeLists.txt).
AgentBinaries PackagedAgentBinaries(const std::string& memfleet_bin_dir);

// `agents deploy` without --agent-dir: per ABI the packaged agent when that file exists, else the one
// scripts/build-agent made under the current folder. `exists` is the file system's answer.
AgentBinaries DefaultAgentBinaries(const std::string& memfleet_bin_dir,
                                   const std::function<bool(const std::string&)>& exists);

// The binary for `abi` (the phone's ro.product.cpu.abi); InvalidArgument naming the ABI when memfleet
// builds no agent for it, or when its binary is not configured.
absl::StatusOr<std::string> AgentBinaryForAbi(std::string_view abi, const AgentBinaries& binaries);

// The device id for an adb serial: the serial itself when the server accepts it (letters, digits and
// . _ - : @ +), each other byte replaced by '_', at most 128 bytes.
std::string DeviceIdForSerial(std::string_view serial);

// `--name-map FILE`: lines "SERIAL NAME" (the name after the last run of blanks, so a serial may hold
// spaces; '#' starts a comment line), serial -> device id. InvalidArgument naming the line for a name the
// server would not take as a device id, a serial given twice or a name given twice.
absl::StatusOr<std::map<std::string, std::string>> ParseNameMap(std::string_view text);

// How the agent runs on a phone: as root through `adb root` (userdebug builds), as root through
// `su -c` (rooted phones), or as the shell user (what a retail build allows).
enum class AccessLevel { kAdbRoot, kSu, kShell };
std::string AccessName(AccessLevel access);  // "adb-root", "su", "shell"

// What `agents deploy` chose for a phone, kept there (agent.conf) so status, stop and supervise need no
// flags to act as deploy did.
struct PhoneAgentConfig {
  std::string device_id;
  int server_port = 0;
  uint32_t interval_s = 300;
  AccessLevel access = AccessLevel::kShell;
  bool token = false;    // agent token pushed (the agent gets --token-file)
  bool ca_cert = false;  // server CA pushed (the agent connects with TLS)
  // The address the agent dials; "" = 127.0.0.1:server_port, the lab host's port through adb reverse.
  std::string server;
  capture::Labels labels;  // the agent's --label flags: on every capture it sends
};

std::string RenderPhoneAgentConfig(const PhoneAgentConfig& config);  // key=value lines
// InvalidArgument naming the bad or missing line.
absl::StatusOr<PhoneAgentConfig> ParsePhoneAgentConfig(std::string_view text);

// `text` as one word of a POSIX shell: '…' with each ' written '\''.
std::string ShellQuote(std::string_view text);

// `command` as the access level runs it: wrapped in `su -c '…'` for kSu, as it is otherwise (after
// `adb root` the shell is root already).
std::string WithAccess(AccessLevel access, const std::string& command);

// The memfleet-agent command line on the phone (server 127.0.0.1:PORT over `adb reverse` unless
// config.server names another, root /).
std::string AgentCommandLine(const PhoneAgentConfig& config);

// Starts the agent detached (setsid + nohup, stdin /dev/null, output appended to agent.log, pid in
// agent.pid) unless one runs; prints "started PID" or "running PID".
std::string StartAgentCommand(const PhoneAgentConfig& config);

// Stops the agent (TERM, then KILL after 10 s), removes its pid file and marks it stopped on purpose
// (agent.stopped, which the next start removes); prints "stopped PID" or "not running".
std::string StopAgentCommand();

// Prints "running PID", "stopped" (by StopAgentCommand), "died" (not running, not stopped on purpose) or
// "not deployed", then "---" and agent.conf.
std::string ProbeAgentCommand();

struct AgentProbe {
  enum State { kRunning, kStopped, kDied, kNotDeployed } state = kNotDeployed;
  int64_t pid = 0;                          // kRunning only
  absl::StatusOr<PhoneAgentConfig> config;  // error when not deployed or unreadable
};
// InvalidArgument when the output is not what ProbeAgentCommand prints (a phone shell that failed).
absl::StatusOr<AgentProbe> ParseAgentProbe(std::string_view output);

// The pid in "started PID" / "running PID" (StartAgentCommand's answer), or InvalidArgument quoting it.
absl::StatusOr<int64_t> ParseStartedPid(std::string_view output);

}  // namespace memfleet::cli

#endif  // MEMFLEET_CLI_COMMANDS_AGENTS_PLAN_H_
