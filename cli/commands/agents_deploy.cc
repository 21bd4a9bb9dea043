// `memfleet agents deploy`: push, tunnel, start and confirm memfleet-agent on each phone.
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "capture/labels.h"
#include "common/scoped_fd.h"
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
  std::string token = "-";  // the agent token's name, and whether it was minted now or kept
  std::string pid = "-";
  std::string state;
  bool failed = false;
  bool started = false;
};

absl::Status Readable(const std::string& path, const std::string& what) {
  if (::access(path.c_str(), R_OK) == 0) return absl::OkStatus();
  return absl::NotFoundError(absl::StrCat(what, " ", path, " is missing or unreadable"));
}

// The folder of the running memfleet ("." when /proc/self/exe cannot be read).
std::string OwnBinDir() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : self.parent_path().string();
}

AgentBinaries BinariesOf(const AgentsDeployArgs& args) {
  AgentBinaries binaries = !args.agent_dir.empty() ? AgentBinariesIn(args.agent_dir)
                                                   : DefaultAgentBinaries(OwnBinDir(), [](const std::string& path) {
                                                       return ::access(path.c_str(), R_OK) == 0;
                                                     });
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
    return absl::NotFoundError(absl::StrCat(s.message(), " (install the memfleet-agents package, or run ", build, ")"));
  }
  return binary;
}

// The agent token made by hand for this phone under --token-dir ("" for none).
absl::StatusOr<std::string> LocalToken(const std::string& device_id, const AgentsDeployArgs& args) {
  if (args.token_dir.empty()) return std::string();
  const std::string path = args.token_dir + "/" + device_id + ".token";
  if (absl::Status s = Readable(path, "agent token"); !s.ok()) return s;
  return path;
}

// A file only this user may read, holding a secret for one push, removed with the object.
class SecretFile {
 public:
  explicit SecretFile(const std::string& secret) {
    std::string dir = std::filesystem::temp_directory_path().string() + "/memfleet-token-XXXXXX";
    if (mkdtemp(dir.data()) == nullptr) return;
    dir_ = dir;
    const std::string path = dir_ + "/token";
    ScopedFd fd(open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    if (!fd.valid() || write(fd.get(), secret.data(), secret.size()) != static_cast<ssize_t>(secret.size())) return;
    path_ = path;
  }
  ~SecretFile() {
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }
  SecretFile(const SecretFile&) = delete;
  SecretFile& operator=(const SecretFile&) = delete;

  const std::string& path() const { return path_; }  // "" when it could not be written

 private:
  std::string dir_;
  std::string path_;
};

// The phone's agent token after asking the server (--mint-tokens): the one it holds when the server
// keeps it, else a new one pushed (mode 600, never printed). Fills the row's TOKEN.
absl::Status MintToken(const AgentsDeployArgs& args, ServerClient& server, AgentPhone& phone, DeployRow& row) {
  absl::StatusOr<std::string> current = phone.Shell(absl::StrCat("cat ", kPhoneAgentDir, "/token 2>/dev/null; true"));
  if (!current.ok()) return current.status();
  v1::MintAgentTokenRequest request;
  request.set_device_id(row.device_id);
  request.set_current_token(std::string(absl::StripAsciiWhitespace(*current)));
  request.set_rotate(args.rotate_tokens);
  absl::StatusOr<v1::MintAgentTokenResponse> minted = server.MintAgentToken(request);
  if (!minted.ok()) return minted.status();
  if (minted->token().empty()) {
    row.token = minted->token_name() + " (kept)";
    return absl::OkStatus();
  }
  SecretFile file(minted->token());
  if (file.path().empty()) return absl::InternalError("cannot write the minted token to a private temporary file");
  if (absl::Status s = phone.Push(file.path(), absl::StrCat(kPhoneAgentDir, "/token")); !s.ok()) return s;
  if (absl::StatusOr<std::string> s = phone.Shell(absl::StrCat("chmod 600 ", kPhoneAgentDir, "/token")); !s.ok()) {
    return s.status();
  }
  row.token = minted->token_name() + (minted->revoked_token_name().empty() ? " (new)" : " (rotated)");
  return absl::OkStatus();
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

// Where the CLI asks the server: --server, else where the phones dial (127.0.0.1:PORT on this host
// through adb reverse, or --phone-server).
ServerArgs QueryOf(const AgentsDeployArgs& args) {
  ServerArgs query = args.query;
  if (query.server.empty()) {
    query.server = args.phone_server.empty() ? absl::StrCat("127.0.0.1:", args.server_port) : args.phone_server;
  }
  return query;
}

// Everything up to the agent's start; the row says how far it got. `server`: for --mint-tokens.
absl::Status DeployOne(const AgentsDeployArgs& args, const capture::Labels& labels, ServerClient* server,
                       AgentPhone& phone, DeployRow& row) {
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
  if (!token->empty()) row.token = row.device_id + ".token";
  if (server != nullptr) {
    if (absl::Status s = MintToken(args, *server, phone, row); !s.ok()) return s;
  }

  PhoneAgentConfig config;
  config.device_id = row.device_id;
  config.server_port = args.server_port;
  config.server = args.phone_server;
  config.interval_s = args.interval_s;
  config.access = phone.GainAccess();  // before the tunnel: adb root restarts adbd, which drops it
  config.token = !token->empty() || server != nullptr;
  config.ca_cert = !args.query.ca_cert.empty();
  config.labels = labels;
  row.access = std::string(AccessName(config.access));
  if (config.server.empty()) {
    if (absl::Status s = phone.Reverse(args.server_port); !s.ok()) return s;
  }
  const std::string write_config =
      "printf %s " + ShellQuote(RenderPhoneAgentConfig(config)) + " >" + kPhoneAgentDir + "/agent.conf";
  if (absl::StatusOr<std::string> s = phone.Shell(write_config); !s.ok()) return s.status();
  absl::StatusOr<int64_t> pid = phone.StartAgent(config);
  if (!pid.ok()) return pid.status();
  row.pid = std::to_string(*pid);
  return absl::OkStatus();
}

// Waits until the server lists every started agent's device online, or the timeout passes.
void ConfirmOnline(const AgentsDeployArgs& args, std::vector<DeployRow>& rows) {
  const ServerArgs query = QueryOf(args);
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

// The checks made before any phone is touched: flags, labels, the name map. The labels and names, or a
// usage error printed on `err`.
struct DeployPlan {
  capture::Labels labels;
  std::map<std::string, std::string> names;  // serial -> device id (--name-map)
};

absl::StatusOr<DeployPlan> PlanDeploy(const AgentsDeployArgs& args) {
  if (args.phone_server.empty() && (args.server_port <= 0 || args.server_port > 65535)) {
    return absl::InvalidArgumentError("--server-port PORT (1-65535) or --phone-server ADDRESS is required");
  }
  if (args.rotate_tokens && !args.mint_tokens) return absl::InvalidArgumentError("--rotate-tokens needs --mint-tokens");
  if (args.mint_tokens && !args.token_dir.empty()) {
    return absl::InvalidArgumentError("give --mint-tokens or --token-dir, not both");
  }
  if (args.mint_tokens && args.insecure_no_tokens) {
    return absl::InvalidArgumentError("--mint-tokens gives the agents tokens: drop --insecure-no-tokens");
  }
  DeployPlan plan;
  absl::StatusOr<capture::Labels> labels = capture::ParseLabelFlags(args.labels);
  if (!labels.ok()) return labels.status();
  plan.labels = *labels;
  if (!args.name_map_file.empty()) {
    std::ifstream in(args.name_map_file);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) return absl::InvalidArgumentError("cannot read --name-map " + args.name_map_file);
    absl::StatusOr<std::map<std::string, std::string>> names = ParseNameMap(text.str());
    if (!names.ok())
      return absl::InvalidArgumentError(
          absl::StrCat("--name-map ", args.name_map_file, ": ", names.status().message()));
    plan.names = *names;
  }
  return plan;
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
        "the server at ", query.server,
        " answers calls without a token, so it would take agents without one too: "
        "adb reverse puts its port on every phone's 127.0.0.1, where any app could then connect as any device and "
        "make admin calls. Give the server tokens (memfleet-server token add, docs/security.md) and deploy with "
        "--mint-tokens, or pass --insecure-no-tokens for phones nobody else installs apps on"));
  }
  return absl::UnavailableError(absl::StrCat("cannot tell whether the server at ", query.server,
                                             " requires agent tokens (", answer.message(),
                                             "); start it first, or pass --insecure-no-tokens"));
}

int RunAgentsDeploy(const AgentsDeployArgs& args, Adb& adb, std::ostream& out, std::ostream& err) {
  absl::StatusOr<DeployPlan> plan = PlanDeploy(args);
  if (!plan.ok()) return PrintFailure(plan.status(), "agents deploy", err);
  if (!args.insecure_no_tokens) {
    absl::Status secured = CheckServerNeedsTokens(QueryOf(args), args.server_port);
    if (absl::IsFailedPrecondition(secured)) {
      err << "memfleet agents deploy: refused: " << secured.message() << "\n";
      return kExitUsage;
    }
    if (!secured.ok()) return PrintFailure(secured, "agents deploy", err);
  }
  absl::StatusOr<std::vector<SelectedPhone>> phones = SelectPhones(args.target, false, adb);
  if (!phones.ok()) return PrintFailure(phones.status(), "agents deploy", err);

  std::vector<DeployRow> rows;
  std::map<std::string, std::string> serial_of_id;
  for (const SelectedPhone& phone : *phones) {
    DeployRow row;
    row.serial = phone.serial;
    auto named = plan->names.find(phone.serial);
    row.device_id = named != plan->names.end() ? named->second : DeviceIdForSerial(phone.serial);
    row.state = phone.unusable;
    row.failed = !phone.unusable.empty();
    // Two phones under one device id would take turns being refused by the server: refuse the deploy.
    if (auto [at, fresh] = serial_of_id.emplace(row.device_id, phone.serial); !fresh && !row.failed) {
      err << "memfleet agents deploy: device id \"" << TerminalSafe(row.device_id) << "\" would name both \""
          << TerminalSafe(at->second) << "\" and \"" << TerminalSafe(phone.serial)
          << "\" (--name-map names each phone once); nothing was deployed\n";
      return kExitUsage;
    }
    rows.push_back(std::move(row));
  }
  std::unique_ptr<ServerClient> server;
  if (args.mint_tokens) {
    absl::StatusOr<std::unique_ptr<ServerClient>> client = ConnectToServer(QueryOf(args));
    if (!client.ok()) return PrintFailure(client.status(), "agents deploy", err);
    server = std::move(*client);
  }
  for (DeployRow& row : rows) {
    if (row.failed) continue;
    AgentPhone phone(adb, row.serial);
    absl::Status s = DeployOne(args, plan->labels, server.get(), phone, row);
    row.started = s.ok();
    if (!s.ok()) {
      row.state = std::string(s.message());
      row.failed = true;
    }
  }
  ConfirmOnline(args, rows);

  TextTable table({{"SERIAL"}, {"DEVICE"}, {"ABI"}, {"ACCESS"}, {"TOKEN"}, {"PID", TextTable::kRight}, {"STATE"}});
  size_t failed = 0;
  for (const DeployRow& row : rows) {
    table.AddRow({row.serial, row.device_id, row.abi, row.access, row.token, row.pid, row.state});
    if (row.failed) ++failed;
  }
  if (table.row_count() > 0) out << TerminalSafeLines(table.Render()) << "\n";
  if (rows.empty()) err << "memfleet agents deploy: adb devices lists no phone\n";
  out << rows.size() - failed << " of " << rows.size() << " phones running an agent\n";
  return AgentsExitCode(rows.size(), failed);
}

}  // namespace memfleet::cli
