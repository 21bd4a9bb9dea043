// `memfleet agents supervise` and `memfleet agents stop`: keep the deployed agents running, or end them.
#include <chrono>
#include <functional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "cli/commands/agent_phone.h"
#include "cli/commands/agents_command.h"
#include "cli/commands/agents_plan.h"
#include "cli/output_format.h"

namespace memfleet::cli {
namespace {

// One phone's pass: the tunnel again (a restarted adbd dropped it), the access again, then the agent if
// it died (one `agents stop` ended is left alone). What was done, or an error.
absl::StatusOr<std::string> SuperviseOne(AgentPhone& phone) {
  absl::StatusOr<AgentProbe> probe = phone.Probe();
  if (!probe.ok()) return probe.status();
  if (probe->state == AgentProbe::kNotDeployed) return std::string("not deployed (memfleet agents deploy)");
  if (!probe->config.ok()) return probe->config.status();
  if (probe->state == AgentProbe::kStopped) return std::string("stopped (agents stop), left alone");
  const PhoneAgentConfig& config = *probe->config;
  if (absl::Status s = phone.RestoreAccess(config.access); !s.ok()) return s;
  if (config.server.empty()) {
    if (absl::Status s = phone.Reverse(config.server_port); !s.ok()) return s;
  }
  if (probe->state == AgentProbe::kRunning) return absl::StrCat("running, pid ", probe->pid);
  absl::StatusOr<int64_t> pid = phone.StartAgent(config);
  if (!pid.ok()) return pid.status();
  return absl::StrCat("restarted, pid ", *pid);
}

// Stops the phone's agent as it was started, and removes its tunnel: what was done.
absl::StatusOr<std::string> StopOne(AgentPhone& phone) {
  absl::StatusOr<AgentProbe> probe = phone.Probe();
  if (!probe.ok()) return probe.status();
  if (probe->state == AgentProbe::kNotDeployed) return std::string("not deployed");
  const bool known = probe->config.ok();
  absl::StatusOr<std::string> stopped = phone.StopAgent(known ? probe->config->access : AccessLevel::kShell);
  // The tunnel goes with the agent; a failure to remove it leaves nothing running.
  if (stopped.ok() && known && probe->config->server.empty()) (void)phone.RemoveReverse(probe->config->server_port);
  return stopped;
}

// Runs `act` on each selected phone and prints one row per phone: what was done, or why it failed.
int ForEachPhone(const AgentsTarget& target, bool default_all, const std::string& command, Adb& adb, std::ostream& out,
                 std::ostream& err, const std::function<absl::StatusOr<std::string>(AgentPhone&)>& act) {
  absl::StatusOr<std::vector<SelectedPhone>> phones = SelectPhones(target, default_all, adb);
  if (!phones.ok()) return PrintFailure(phones.status(), command, err);
  TextTable table({{"SERIAL"}, {"AGENT"}});
  size_t failed = 0;
  for (const SelectedPhone& selected : *phones) {
    AgentPhone phone(adb, selected.serial);
    absl::StatusOr<std::string> done =
        selected.unusable.empty() ? act(phone) : absl::UnavailableError(selected.unusable);
    if (!done.ok()) ++failed;
    table.AddRow({selected.serial, done.ok() ? *done : absl::StrCat("failed: ", done.status().message())});
  }
  if (table.row_count() > 0) out << TerminalSafeLines(table.Render()) << "\n";
  if (phones->empty()) err << "memfleet " << command << ": adb devices lists no phone\n";
  out.flush();
  return AgentsExitCode(phones->size(), failed);
}

}  // namespace

int RunAgentsSupervise(const AgentsSuperviseArgs& args, Adb& adb, std::ostream& out, std::ostream& err) {
  while (true) {
    int code = ForEachPhone(args.target, true, "agents supervise", adb, out, err, SuperviseOne);
    if (args.once || code == kExitUsage) return code;
    std::this_thread::sleep_for(std::chrono::seconds(args.every_s));  // the supervision period
  }
}

int RunAgentsStop(const AgentsTarget& target, Adb& adb, std::ostream& out, std::ostream& err) {
  return ForEachPhone(target, false, "agents stop", adb, out, err, StopOne);
}

}  // namespace memfleet::cli
