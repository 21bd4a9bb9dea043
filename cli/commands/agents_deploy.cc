// `memfleet agents deploy`: push, tunnel, start and confirm memfleet-agent on each phone.
#include <unistd.h>

#include <chrono>
#include <map>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "cli/commands/agent_phone.h"
#include "cli/commands/agents_command.h"
#include "cli/commands/agents_plan.h"
#include "cli/output_format.h"

namespace memfleet::cli {
namespace {

struct DeployRow {
  std::string serial;
  std::string device_id;
  std::string abi = "-";
  std::string access = "-";
  std::string pid = "-";
  std::string state;
  bool failed = false;
  bool started = false;
};

absl::Status Readable(const std::string& path, const std::string& what) {
  if (::access(path.c_str(), R_OK) == 0) return absl::OkStatus();
  return absl::NotFoundError(absl::StrCat(what, " ", path, " is missing or unreadable"));
}

AgentBinaries BinariesOf(const AgentsDeployArgs& args) {
  AgentBinaries binaries = AgentBinariesIn(args.agent_dir);
  if (!args.arm64_agent.empty()) binaries.arm64 = args.arm64_agent;
  if (!args.x86_64_agent.empty()) binaries.x86_64 = args.x86_64_agent;
  return binaries;
}

// The local agent binary for the phone's ABI, checked to exist.
absl::StatusOr<std::string> LocalBinary(const std::string& abi, const AgentsDeployArgs& args) {
  absl::StatusOr<std::string> binary = AgentBinaryForAbi(abi, BinariesOf(args));
  if (!binary.ok()) return binary.status();
  const std::string build = abi == "arm64-v8a" ? "scripts/build-agent arm64" : "scripts/build-agent x86_64";
  if (absl::Status s = Readable(*binary, "agent binary"); !s.ok()) {
    return absl::NotFoundError(absl::StrCat(s.message(), " (", build, " makes it)"));
  }
  return binary;
}

// The agent token for this phone ("" for none).
absl::StatusOr<std::string> LocalToken(const std::string& device_id, const AgentsDeployArgs& args) {
  std::string path = args.token_file;
  if (!args.token_dir.empty()) path = args.token_dir + "/" + device_id + ".token";
  if (path.empty()) return std::string();
  if (absl::Status s = Readable(path, "agent token"); !s.ok()) return s;
  return path;
}

absl::Status PushFiles(AgentPhone& phone, const std::string& binary, const std::string& token,
                       const std::string& ca_cert) {
  const std::string dir = kPhoneAgentDir;
  if (absl::StatusOr<std::string> s = phone.Shell("mkdir -p " + dir); !s.ok()) return s.status();
  if (absl::Status s = phone.Push(binary, dir + "/memfleet-agent"); !s.ok()) return s;
  std::string modes = "chmod 755 " + dir + "/memfleet-agent";
  if (!token.empty()) {
    if (absl::Status s = phone.Push(token, dir + "/token"); !s.ok()) return s;
    modes += " && chmod 600 " + dir + "/token";
  }
  if (!ca_cert.empty()) {
    if (absl::Status s = phone.Push(ca_cert, dir + "/ca.pem"); !s.ok()) return s;
  }
  return phone.Shell(modes).status();
}

// Everything up to the agent's start; the row says how far it got.
absl::Status DeployOne(const AgentsDeployArgs& args, AgentPhone& phone, DeployRow& row) {
  absl::StatusOr<std::string> abi = phone.GetProp("ro.product.cpu.abi");
  if (!abi.ok()) return abi.status();
  row.abi = abi->empty() ? "-" : *abi;
  absl::StatusOr<std::string> binary = LocalBinary(*abi, args);
  if (!binary.ok()) return binary.status();
  absl::StatusOr<std::string> token = LocalToken(row.device_id, args);
  if (!token.ok()) return token.status();

  // A running agent holds its binary open ("text file busy"): stop it as it was started.
  absl::StatusOr<AgentProbe> before = phone.Probe();
  if (!before.ok()) return before.status();
  if (before->state == AgentProbe::kRunning) {
    AccessLevel was = before->config.ok() ? before->config->access : AccessLevel::kShell;
    if (absl::StatusOr<std::string> s = phone.StopAgent(was); !s.ok()) return s.status();
  }
  if (absl::Status s = PushFiles(phone, *binary, *token, args.query.ca_cert); !s.ok()) return s;

  PhoneAgentConfig config;
  config.device_id = row.device_id;
  config.server_port = args.server_port;
  config.interval_s = args.interval_s;
  config.access = phone.GainAccess();  // before the tunnel: adb root restarts adbd, which drops it
  config.token = !token->empty();
  config.ca_cert = !args.query.ca_cert.empty();
  row.access = std::string(AccessName(config.access));
  if (absl::Status s = phone.Reverse(args.server_port); !s.ok()) return s;
  const std::string write_config = "printf %s " + ShellQuote(RenderPhoneAgentConfig(config)) + " >" +
                                   kPhoneAgentDir + "/agent.conf";
  if (absl::StatusOr<std::string> s = phone.Shell(write_config); !s.ok()) return s.status();
  absl::StatusOr<int64_t> pid = phone.StartAgent(config);
  if (!pid.ok()) return pid.status();
  row.pid = std::to_string(*pid);
  return absl::OkStatus();
}

// Waits until the server lists every started agent's device online, or the timeout passes.
void ConfirmOnline(const AgentsDeployArgs& args, std::vector<DeployRow>& rows) {
  ServerArgs query = args.query;
  if (query.server.empty()) query.server = absl::StrCat("127.0.0.1:", args.server_port);
  absl::StatusOr<std::unique_ptr<ServerClient>> client = ConnectToServer(query);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(args.confirm_timeout_s);
  absl::Status last_error = client.status();
  while (client.ok()) {
    absl::StatusOr<v1::ListDevicesResponse> devices = (*client)->ListDevices({});
    last_error = devices.status();
    std::map<std::string, bool> online;
    if (devices.ok()) {
      for (const v1::DeviceSummary& d : devices->devices()) online[d.device_id()] = d.online();
    }
    bool waiting = false;
    for (DeployRow& row : rows) {
      if (!row.started || !row.state.empty()) continue;
      if (online[row.device_id]) {
        row.state = "connected";
      } else {
        waiting = true;
      }
    }
    if (!waiting || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the next look at the server
  }
  for (DeployRow& row : rows) {
    if (!row.started || !row.state.empty()) continue;
    if (last_error.ok()) {
      row.state = absl::StrCat("started, not online at ", query.server, " within ", args.confirm_timeout_s,
                               " s (memfleet agents logs ", row.serial, ")");
      row.failed = true;
    } else {
      row.state = absl::StrCat("started; not confirmed, the server could not be asked: ", last_error.message());
    }
  }
}

}  // namespace

absl::Status CheckServerNeedsTokens(ServerArgs query, int server_port) {
  if (query.server.empty()) query.server = absl::StrCat("127.0.0.1:", server_port);
  query.token.clear();
  query.token_file.clear();
  query.env_token = "";
  absl::StatusOr<std::unique_ptr<ServerClient>> client = ConnectToServer(query);
  absl::Status answer = client.ok() ? (*client)->ListDevices({}).status() : client.status();
  if (answer.code() == absl::StatusCode::kUnauthenticated) return absl::OkStatus();
  if (answer.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the server at ", query.server, " answers calls without a token, so it would take agents without one too: "
        "adb reverse puts its port on every phone's 127.0.0.1, where any app could then connect as any device and "
        "make admin calls. Give the server tokens (memfleet-server token add, docs/security.md) and deploy with "
        "an agent token per phone (--token-dir), or pass --insecure-no-tokens for phones nobody else installs apps on"));
  }
  return absl::UnavailableError(absl::StrCat("cannot tell whether the server at ", query.server,
                                             " requires agent tokens (", answer.message(),
                                             "); start it first, or pass --insecure-no-tokens"));
}

int RunAgentsDeploy(const AgentsDeployArgs& args, Adb& adb, std::ostream& out, std::ostream& err) {
  if (args.server_port <= 0 || args.server_port > 65535) {
    err << "memfleet agents deploy: --server-port PORT is required (1-65535)\n";
    return kExitUsage;
  }
  if (!args.token_file.empty() && !args.token_dir.empty()) {
    err << "memfleet agents deploy: give --token-file or --token-dir, not both\n";
    return kExitUsage;
  }
  if (!args.insecure_no_tokens) {
    absl::Status secured = CheckServerNeedsTokens(args.query, args.server_port);
    if (absl::IsFailedPrecondition(secured)) {
      err << "memfleet agents deploy: refused: " << secured.message() << "\n";
      return kExitUsage;
    }
    if (!secured.ok()) return PrintFailure(secured, "agents deploy", err);
  }

  int skipped = 0;
  absl::StatusOr<std::vector<std::string>> serials = SelectPhones(args.target, false, adb, err, &skipped);
  if (!serials.ok()) return PrintFailure(serials.status(), "agents deploy", err);

  std::vector<DeployRow> rows;
  for (const std::string& serial : *serials) {
    DeployRow row;
    row.serial = serial;
    row.device_id = DeviceIdForSerial(serial);
    AgentPhone phone(adb, serial);
    absl::Status s = DeployOne(args, phone, row);
    row.started = s.ok();
    if (!s.ok()) {
      row.state = std::string(s.message());
      row.failed = true;
    }
    rows.push_back(std::move(row));
  }
  ConfirmOnline(args, rows);

  TextTable table({{"SERIAL"}, {"DEVICE"}, {"ABI"}, {"ACCESS"}, {"PID", TextTable::kRight}, {"STATE"}});
  int failed = skipped;
  for (const DeployRow& row : rows) {
    table.AddRow({row.serial, row.device_id, row.abi, row.access, row.pid, row.state});
    if (row.failed) ++failed;
  }
  if (table.row_count() > 0) out << TerminalSafeLines(table.Render()) << "\n";
  out << rows.size() - static_cast<size_t>(failed - skipped) << " of " << rows.size() + skipped
      << " phones running an agent\n";
  return failed == 0 ? kExitOk : kExitPhoneFailed;
}

}  // namespace memfleet::cli
