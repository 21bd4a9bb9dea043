// `memfleet agents status` and `memfleet agents logs`: what runs on each phone, and what its agent said.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/commands/agent_phone.h"
#include "cli/commands/agents_command.h"
#include "cli/commands/agents_plan.h"
#include "chart/figure_text.h"
#include "cli/output_format.h"
#include "nlohmann/json.hpp"

namespace memfleet::cli {
namespace {

using nlohmann::json;

// The server's view of each device id, or the reason there is none.
struct ServerView {
  std::map<std::string, v1::DeviceSummary> devices;
  std::string unavailable;  // non-empty: the server was not asked or did not answer
};

std::string AgentState(const AgentProbe& probe) {
  switch (probe.state) {
    case AgentProbe::kRunning:
      return absl::StrCat("running, pid ", probe.pid);
    case AgentProbe::kStopped:
      return "stopped (agents stop)";
    case AgentProbe::kDied:
      return "not running: died (agents supervise restarts it)";
    case AgentProbe::kNotDeployed:
      return "not deployed";
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

// One phone's line of `agents status`; "" where a value is unknown.
struct PhoneStatus {
  std::string serial;
  std::string device_id;
  std::string agent;    // "running", "stopped", "died", "not deployed" or "unknown"
  int pid = 0;          // of a running agent
  std::string problem;  // why the phone or its agent.conf could not be read
  std::string access;   // root, su, shell
  std::string selinux;  // enforcing, permissive, none ("" when getenforce gave no such answer)
  std::string agent_version;
  std::string tier;    // the tier its agent said in its latest Hello: kernel, dumpsys
  std::string server;  // "online", "offline", "unknown device"
  std::string last_capture_at;
};

std::string AgentWord(AgentProbe::State state) {
  switch (state) {
    case AgentProbe::kRunning:
      return "running";
    case AgentProbe::kStopped:
      return "stopped";
    case AgentProbe::kDied:
      return "died";
    case AgentProbe::kNotDeployed:
      return "not deployed";
  }
  return "not deployed";
}

PhoneStatus StatusOf(const std::string& serial, const absl::StatusOr<AgentProbe>& probe,
                     const absl::StatusOr<std::string>& selinux, const ServerView& server) {
  PhoneStatus row;
  row.serial = serial;
  if (selinux.ok()) row.selinux = *selinux;
  if (!probe.ok()) {
    row.agent = "unknown";
    row.problem = std::string(probe.status().message());
    return row;
  }
  const bool deployed = probe->state != AgentProbe::kNotDeployed && probe->config.ok();
  row.device_id = deployed ? probe->config->device_id : DeviceIdForSerial(serial);
  row.agent = AgentWord(probe->state);
  if (probe->state == AgentProbe::kRunning) row.pid = probe->pid;
  if (probe->state != AgentProbe::kNotDeployed && !probe->config.ok()) {
    row.problem = std::string(probe->config.status().message());
  }
  if (deployed) row.access = AccessName(probe->config->access);
  auto known = server.devices.find(row.device_id);
  if (known != server.devices.end()) {
    row.agent_version = known->second.agent_version();
    row.tier = known->second.agent_tier();
    row.server = known->second.online() ? "online" : "offline";
    row.last_capture_at = known->second.last_capture_at();
  } else if (server.unavailable.empty()) {
    row.server = "unknown device";
  }
  return row;
}

// SERIAL, DEVICE, AGENT, ACCESS, SELINUX, TIER, VERSION, SERVER, LAST CAPTURE.
std::vector<std::string> TableRow(const PhoneStatus& row, const std::optional<AgentProbe>& probe) {
  if (!probe.has_value()) return {row.serial, chart::kNoValue, absl::StrCat("unknown: ", row.problem)};
  std::string agent = AgentState(*probe);
  if (!row.problem.empty()) agent += absl::StrCat(" (", row.problem, ")");
  std::string last = row.server.empty() || row.server == "unknown device" ? chart::kNoValue
                     : row.last_capture_at.empty()                        ? chart::kNoCapture
                                                                          : row.last_capture_at;
  return {row.serial,
          row.device_id,
          agent,
          TextOrDash(row.access),
          TextOrDash(row.selinux),
          TextOrDash(row.tier),
          TextOrDash(row.agent_version),
          TextOrDash(row.server),
          last};
}

json NullIfEmpty(const std::string& v) { return v.empty() ? json(nullptr) : json(v); }

std::string RenderJson(const std::vector<PhoneStatus>& rows, const ServerView& server) {
  json phones = json::array();
  for (const PhoneStatus& r : rows) {
    phones.push_back({{"serial", r.serial},
                      {"device_id", NullIfEmpty(r.device_id)},
                      {"agent", r.agent},
                      {"pid", r.pid > 0 ? json(r.pid) : json(nullptr)},
                      {"problem", NullIfEmpty(r.problem)},
                      {"access", NullIfEmpty(r.access)},
                      {"selinux", NullIfEmpty(r.selinux)},
                      {"tier", NullIfEmpty(r.tier)},
                      {"agent_version", NullIfEmpty(r.agent_version)},
                      {"server", NullIfEmpty(r.server)},
                      {"last_capture_at", NullIfEmpty(r.last_capture_at)}});
  }
  json doc = {{"phones", phones}, {"server_unavailable", NullIfEmpty(server.unavailable)}};
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string RenderCsv(const std::vector<PhoneStatus>& rows) {
  std::string out = CsvRow({"serial", "device_id", "agent", "pid", "problem", "access", "selinux", "tier",
                            "agent_version", "server", "last_capture_at"});
  for (const PhoneStatus& r : rows) {
    out += CsvRow({r.serial, r.device_id, r.agent, r.pid > 0 ? std::to_string(r.pid) : "", r.problem, r.access,
                   r.selinux, r.tier, r.agent_version, r.server, r.last_capture_at});
  }
  return out;
}

}  // namespace

int RunAgentsStatus(const AgentsStatusArgs& args, Adb& adb, std::ostream& out, std::ostream& err) {
  absl::StatusOr<OutputFormat> format = OutputFormatOf(args.query);
  if (!format.ok()) return PrintFailure(format.status(), "agents status", err);
  absl::StatusOr<std::vector<SelectedPhone>> phones = SelectPhones(args.target, true, adb);
  if (!phones.ok()) return PrintFailure(phones.status(), "agents status", err);

  std::vector<std::pair<std::string, absl::StatusOr<AgentProbe>>> probes;
  std::vector<absl::StatusOr<std::string>> selinux_modes;
  int port = 0;
  for (const SelectedPhone& selected : *phones) {
    AgentPhone phone(adb, selected.serial);
    absl::StatusOr<AgentProbe> probe =
        selected.unusable.empty() ? phone.Probe() : absl::UnavailableError(selected.unusable);
    if (probe.ok() && probe->config.ok() && port == 0) port = probe->config->server_port;
    // What SELinux lets the agent read: docs/deploy.md's table of access on a user build.
    selinux_modes.push_back(probe.ok() ? phone.SelinuxMode() : absl::StatusOr<std::string>(probe.status()));
    probes.emplace_back(selected.serial, std::move(probe));
  }
  ServerView server = AskServer(args.query, port);

  std::vector<PhoneStatus> rows;
  size_t failed = 0;
  for (size_t i = 0; i < probes.size(); ++i) {
    rows.push_back(StatusOf(probes[i].first, probes[i].second, selinux_modes[i], server));
    if (!probes[i].second.ok()) ++failed;
  }
  if (*format == OutputFormat::kJson) {
    out << RenderJson(rows, server);
  } else if (*format == OutputFormat::kCsv) {
    out << RenderCsv(rows);
  } else {
    TextTable table({{"SERIAL"},
                     {"DEVICE"},
                     {"AGENT"},
                     {"ACCESS"},
                     {"SELINUX"},
                     {"TIER"},
                     {"VERSION"},
                     {"SERVER"},
                     {"LAST CAPTURE"}});
    for (size_t i = 0; i < rows.size(); ++i) {
      const absl::StatusOr<AgentProbe>& probe = probes[i].second;
      table.AddRow(TableRow(rows[i], probe.ok() ? std::optional<AgentProbe>(*probe) : std::nullopt));
    }
    if (table.row_count() > 0) out << TerminalSafeLines(table.Render()) << "\n";
    if (!server.unavailable.empty()) {
      out << TerminalSafeLines("server not asked (VERSION, SERVER, LAST CAPTURE unknown): " + server.unavailable)
          << "\n";
    }
  }
  if (phones->empty()) err << "memfleet agents status: adb devices lists no phone\n";
  return AgentsExitCode(phones->size(), failed);
}

int RunAgentsLogs(const AgentsLogsArgs& args, Adb& adb, std::ostream& out, std::ostream& err) {
  AgentPhone phone(adb, args.serial);
  // The phone sends at most the log's last kAgentLogTailBytes: a log line may be of any length.
  absl::StatusOr<std::string> log = phone.Shell(
      absl::StrCat("tail -c ", kAgentLogTailBytes, " ", kPhoneAgentDir, "/agent.log | tail -n ", args.lines));
  if (!log.ok()) return PrintFailure(log.status(), "agents logs", err);
  out << TerminalSafeLines(*log);
  if (log->size() >= kAgentLogTailBytes) {
    err << "memfleet agents logs: the last " << (kAgentLogTailBytes >> 20) << " MiB of agent.log only\n";
  }
  return kExitOk;
}

}  // namespace memfleet::cli
