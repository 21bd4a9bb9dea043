// `memfleet agents status` and `memfleet agents logs`: what runs on each phone, and what its agent said.
#include <map>
#include <memory>

#include "absl/strings/str_cat.h"
#include "cli/commands/agent_phone.h"
#include "cli/commands/agents_command.h"
#include "cli/commands/agents_plan.h"
#include "cli/output_format.h"

namespace memfleet::cli {
namespace {

// The server's view of each device id, or the reason there is none.
struct ServerView {
  std::map<std::string, v1::DeviceSummary> devices;
  std::string unavailable;  // non-empty: the server was not asked or did not answer
};

std::string AgentState(const AgentProbe& probe) {
  switch (probe.state) {
    case AgentProbe::kRunning: return absl::StrCat("running, pid ", probe.pid);
    case AgentProbe::kStopped: return "stopped (agents stop)";
    case AgentProbe::kDied: return "not running: died (agents supervise restarts it)";
    case AgentProbe::kNotDeployed: return "not deployed";
  }
  return "not deployed";
}

ServerView AskServer(ServerArgs query, int port_from_phones) {
  ServerView view;
  if (query.server.empty() && port_from_phones > 0) query.server = absl::StrCat("127.0.0.1:", port_from_phones);
  absl::StatusOr<std::unique_ptr<ServerClient>> client = ConnectToServer(query);
  if (!client.ok()) {
    view.unavailable = std::string(client.status().message());
    return view;
  }
  absl::StatusOr<v1::ListDevicesResponse> listed = (*client)->ListDevices({});
  if (!listed.ok()) {
    view.unavailable = std::string(listed.status().message());
    return view;
  }
  for (const v1::DeviceSummary& d : listed->devices()) view.devices[d.device_id()] = d;
  return view;
}

// SERIAL, DEVICE, AGENT, ACCESS, VERSION, SERVER, LAST CAPTURE of one phone that answered.
std::vector<std::string> StatusRow(const std::string& serial, const AgentProbe& probe, const ServerView& server) {
  const bool deployed = probe.state != AgentProbe::kNotDeployed && probe.config.ok();
  const std::string device_id = deployed ? probe.config->device_id : DeviceIdForSerial(serial);
  std::string agent = AgentState(probe);
  if (probe.state != AgentProbe::kNotDeployed && !probe.config.ok()) {
    agent += absl::StrCat(" (", probe.config.status().message(), ")");
  }
  std::string version = "-", online = "-", last = "-";
  auto known = server.devices.find(device_id);
  if (known != server.devices.end()) {
    version = known->second.agent_version().empty() ? "-" : known->second.agent_version();
    online = known->second.online() ? "online" : "offline";
    last = known->second.last_capture_at().empty() ? "never" : known->second.last_capture_at();
  } else if (server.unavailable.empty()) {
    online = "unknown device";
  }
  return {serial, device_id, agent, deployed ? AccessName(probe.config->access) : "-", version, online, last};
}

}  // namespace

int RunAgentsStatus(const AgentsStatusArgs& args, Adb& adb, std::ostream& out, std::ostream& err) {
  int skipped = 0;
  absl::StatusOr<std::vector<std::string>> serials = SelectPhones(args.target, true, adb, err, &skipped);
  if (!serials.ok()) return PrintFailure(serials.status(), "agents status", err);

  std::vector<std::pair<std::string, absl::StatusOr<AgentProbe>>> probes;
  int port = 0;
  for (const std::string& serial : *serials) {
    AgentPhone phone(adb, serial);
    absl::StatusOr<AgentProbe> probe = phone.Probe();
    if (probe.ok() && probe->config.ok() && port == 0) port = probe->config->server_port;
    probes.emplace_back(serial, std::move(probe));
  }
  ServerView server = AskServer(args.query, port);

  TextTable table({{"SERIAL"}, {"DEVICE"}, {"AGENT"}, {"ACCESS"}, {"VERSION"}, {"SERVER"}, {"LAST CAPTURE"}});
  int failed = skipped;
  for (const auto& [serial, probe] : probes) {
    if (!probe.ok()) {
      table.AddRow({serial, "-", absl::StrCat("unknown: ", probe.status().message())});
      ++failed;
      continue;
    }
    table.AddRow(StatusRow(serial, *probe, server));
  }
  if (table.row_count() > 0) out << TerminalSafeLines(table.Render()) << "\n";
  if (!server.unavailable.empty()) {
    out << TerminalSafeLines("server not asked (VERSION, SERVER, LAST CAPTURE unknown): " + server.unavailable) << "\n";
  }
  return failed == 0 ? kExitOk : kExitPhoneFailed;
}

int RunAgentsLogs(const AgentsLogsArgs& args, Adb& adb, std::ostream& out, std::ostream& err) {
  AgentPhone phone(adb, args.serial);
  absl::StatusOr<std::string> log =
      phone.Shell(absl::StrCat("tail -n ", args.lines, " ", kPhoneAgentDir, "/agent.log"));
  if (!log.ok()) return PrintFailure(log.status(), "agents logs", err);
  out << TerminalSafeLines(*log);
  return kExitOk;
}

}  // namespace memfleet::cli
