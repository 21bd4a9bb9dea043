#include "cli/commands/agents_plan.h"

#include <algorithm>
#include <vector>

#include "absl/strings/string_view.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/label_text.h"

namespace memfleet::cli {
namespace {

absl::string_view Absl(std::string_view text) { return absl::string_view(text.data(), text.size()); }

constexpr size_t kMaxDeviceIdBytes = 128;  // what the server accepts

bool DeviceIdByte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-' || c == ':' || c == '@' || c == '+';
}

// Defines `alive`: true while agent.pid ($p) names a running memfleet-agent. $p must be digits only (a
// pid file is text anyone who can write the folder may plant), and the process's executable, which the
// kernel sets and no process can rewrite, must be this folder's agent binary: not kill -0 (the shell user
// may not signal a root agent) and not the command line (any process may put "memfleet-agent" in it). A
// killed agent nobody reaped yet (a zombie) has no executable.
std::string AliveFunction(const std::string& read_exe) {
  return absl::StrCat("alive() { case \"$p\" in ''|*[!0-9]*) return 1 ;; esac; [ \"$(", read_exe,
                      ")\" = ", kPhoneAgentDir, "/memfleet-agent ]; }; ");
}

// As the agent's own user: the start and stop commands run with its access (WithAccess) already.
std::string AliveAsCaller() { return AliveFunction("readlink /proc/$p/exe 2>/dev/null"); }

// For the probe, which runs as the shell user: the shell user may not read a root process's exe, so a
// phone whose agent runs through su asks su ($p is digits by then).
std::string AliveForProbe() {
  return AliveFunction(
      "if grep -qx access=su agent.conf; then su -c \"readlink /proc/$p/exe\"; else readlink /proc/$p/exe; fi "
      "2>/dev/null");
}

}  // namespace

AgentBinaries AgentBinariesIn(const std::string& dir) {
  return {dir + "/build-agent-arm64/bin/memfleet-agent", dir + "/build-agent-x86_64/bin/memfleet-agent"};
}

AgentBinaries PackagedAgentBinaries(const std::string& memfleet_bin_dir) {
  const std::string share = memfleet_bin_dir + "/../share/memfleet/agents";
  return {share + "/arm64-v8a/memfleet-agent", share + "/x86_64/memfleet-agent"};
}

AgentBinaries DefaultAgentBinaries(const std::string& memfleet_bin_dir,
                                   const std::function<bool(const std::string&)>& exists) {
  const AgentBinaries packaged = PackagedAgentBinaries(memfleet_bin_dir);
  const AgentBinaries built = AgentBinariesIn(".");
  return {exists(packaged.arm64) ? packaged.arm64 : built.arm64,
          exists(packaged.x86_64) ? packaged.x86_64 : built.x86_64};
}

absl::StatusOr<std::string> AgentBinaryForAbi(std::string_view abi, const AgentBinaries& binaries) {
  const std::string* binary = nullptr;
  const char* arch = "";
  if (abi == "arm64-v8a") {
    binary = &binaries.arm64;
    arch = "arm64";
  } else if (abi == "x86_64") {
    binary = &binaries.x86_64;
    arch = "x86_64";
  }
  if (binary == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("ABI \"", abi.empty() ? "(none)" : Absl(abi),
                                                   "\" has no memfleet agent (built: arm64-v8a, x86_64)"));
  }
  if (binary->empty()) {
    return absl::InvalidArgumentError(absl::StrCat("ABI ", Absl(abi), ": no agent binary given (--", arch, "-agent)"));
  }
  return *binary;
}

std::string DeviceIdForSerial(std::string_view serial) {
  std::string id;
  for (char c : serial.substr(0, kMaxDeviceIdBytes)) id.push_back(DeviceIdByte(c) ? c : '_');
  if (id.empty()) id = "_";
  return id;
}

absl::StatusOr<std::map<std::string, std::string>> ParseNameMap(std::string_view text) {
  std::map<std::string, std::string> names;
  std::map<std::string, std::string> serial_of_name;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(Absl(text), '\n')) {
    ++number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    size_t blank = line.find_last_of(" \t");
    if (blank == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("line ", number, ": not \"SERIAL NAME\""));
    }
    std::string serial(absl::StripTrailingAsciiWhitespace(line.substr(0, blank)));
    std::string name(line.substr(blank + 1));
    if (DeviceIdForSerial(name) != name) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", number, ": name \"", name, "\" is not a device id (1-128 of [A-Za-z0-9._:@+-])"));
    }
    if (names.count(serial) > 0) {
      return absl::InvalidArgumentError(absl::StrCat("line ", number, ": serial \"", serial, "\" is named twice"));
    }
    if (auto [at, fresh] = serial_of_name.emplace(name, serial); !fresh) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", number, ": name \"", name, "\" is given to \"", at->second, "\" already"));
    }
    names[serial] = name;
  }
  return names;
}

std::string AccessName(AccessLevel access) {
  switch (access) {
    case AccessLevel::kAdbRoot:
      return "adb-root";
    case AccessLevel::kSu:
      return "su";
    case AccessLevel::kShell:
      return "shell";
  }
  return "shell";
}

std::string RenderPhoneAgentConfig(const PhoneAgentConfig& config) {
  std::string text = absl::StrCat("device_id=", config.device_id, "\nserver_port=", config.server_port,
                                  "\ninterval_s=", config.interval_s, "\naccess=", AccessName(config.access),
                                  "\ntoken=", config.token ? 1 : 0, "\nca_cert=", config.ca_cert ? 1 : 0, "\n");
  if (!config.server.empty()) absl::StrAppend(&text, "server=", config.server, "\n");
  // As the label parsers read it back (common/label_text.h): a value with a space, or one that starts with
  // a quote, in quotes.
  for (const auto& [key, value] : config.labels)
    absl::StrAppend(&text, "label=", key, "=", LabelValueText(value), "\n");
  return text;
}

absl::StatusOr<PhoneAgentConfig> ParsePhoneAgentConfig(std::string_view text) {
  PhoneAgentConfig config;
  bool has_id = false, has_port = false;
  for (absl::string_view line : absl::StrSplit(Absl(text), '\n', absl::SkipWhitespace())) {
    line = absl::StripTrailingAsciiWhitespace(line);
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(line, absl::MaxSplits('=', 1));
    auto [key, value] = kv;
    bool ok = true;
    if (key == "device_id") {
      ok = !value.empty() && DeviceIdForSerial(std::string_view(value.data(), value.size())) == value;
      config.device_id = std::string(value);
      has_id = ok;
    } else if (key == "server_port") {
      ok = absl::SimpleAtoi(value, &config.server_port) && config.server_port > 0 && config.server_port < 65536;
      has_port = ok;
    } else if (key == "interval_s") {
      ok = absl::SimpleAtoi(value, &config.interval_s) && config.interval_s > 0;
    } else if (key == "access") {
      ok = value == "adb-root" || value == "su" || value == "shell";
      config.access =
          value == "adb-root" ? AccessLevel::kAdbRoot : (value == "su" ? AccessLevel::kSu : AccessLevel::kShell);
    } else if (key == "server") {
      ok = !value.empty() && std::all_of(value.begin(), value.end(), [](char c) {
        return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
               absl::string_view(".:_-[]/").find(c) != absl::string_view::npos;
      });
      config.server = std::string(value);
    } else if (key == "label") {
      absl::StatusOr<std::pair<std::string, std::string>> label =
          capture::ParseLabel(std::string_view(value.data(), value.size()));
      ok = label.ok();
      if (ok) config.labels[label->first] = label->second;
    } else if (key == "token" || key == "ca_cert") {
      ok = value == "0" || value == "1";
      (key == "token" ? config.token : config.ca_cert) = value == "1";
    }  // other keys: written by a later memfleet, ignored
    if (!ok) return absl::InvalidArgumentError(absl::StrCat("agent.conf: bad line \"", line, "\""));
  }
  if (!has_id || !has_port) return absl::InvalidArgumentError("agent.conf: no device_id or server_port line");
  return config;
}

std::string ShellQuote(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out.push_back(c);
    }
  }
  return out + "'";
}

std::string WithAccess(AccessLevel access, const std::string& command) {
  return access == AccessLevel::kSu ? "su -c " + ShellQuote(command) : command;
}

std::string AgentCommandLine(const PhoneAgentConfig& config) {
  const std::string dir = kPhoneAgentDir;
  const std::string server = config.server.empty() ? absl::StrCat("127.0.0.1:", config.server_port) : config.server;
  std::string line =
      absl::StrCat(dir, "/memfleet-agent --server ", ShellQuote(server), " --device-id ", ShellQuote(config.device_id),
                   " --root / --interval ", config.interval_s, " --spool ", dir, "/spool");
  if (config.token) absl::StrAppend(&line, " --token-file ", dir, "/token");
  if (config.ca_cert) absl::StrAppend(&line, " --ca-cert ", dir, "/ca.pem");
  for (const auto& [key, value] : config.labels) {
    absl::StrAppend(&line, " --label ", ShellQuote(key + "=" + LabelValueText(value)));
  }
  return line;
}

std::string StartAgentCommand(const PhoneAgentConfig& config) {
  // The background child is no process-group leader (no job control in sh -c), so setsid makes the
  // session without forking and $! is the agent's own pid.
  return absl::StrCat("cd ", kPhoneAgentDir, " || exit 1; ", AliveAsCaller(),
                      "p=$(cat agent.pid 2>/dev/null); if alive; then echo \"running $p\"; exit 0; fi; "
                      "rm -f agent.stopped; setsid nohup ",
                      AgentCommandLine(config), " </dev/null >>", kPhoneAgentDir,
                      "/agent.log 2>&1 & echo $! >agent.pid; echo \"started $!\"");
}

std::string StopAgentCommand() {
  const std::string wait = "i=0; while alive && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done";
  // agent.stopped tells supervise that nobody wants this agent to run.
  return absl::StrCat(
      "cd ", kPhoneAgentDir, " 2>/dev/null || { echo 'not running'; exit 0; }; : >agent.stopped; ", AliveAsCaller(),
      "p=$(cat agent.pid 2>/dev/null); if ! alive; then rm -f agent.pid; ",
      "echo 'not running'; exit 0; fi; kill \"$p\"; ", wait, "; if alive; then kill -9 \"$p\"; ", wait,
      "; fi; if alive; then echo \"still running $p\"; exit 1; fi; rm -f agent.pid; echo \"stopped $p\"");
}

std::string ProbeAgentCommand() {
  return absl::StrCat("cd ", kPhoneAgentDir, " 2>/dev/null && [ -f agent.conf ] || { echo 'not deployed'; exit 0; }; ",
                      AliveForProbe(), "p=$(cat agent.pid 2>/dev/null); if alive",
                      "; then echo \"running $p\"; elif [ -f agent.stopped ]; then echo stopped; else echo died; fi; ",
                      "echo ---; cat agent.conf");
}

absl::StatusOr<AgentProbe> ParseAgentProbe(std::string_view output) {
  std::pair<absl::string_view, absl::string_view> parts = absl::StrSplit(Absl(output), absl::MaxSplits("\n---\n", 1));
  absl::string_view state = absl::StripAsciiWhitespace(parts.first);
  AgentProbe probe;
  probe.config = absl::NotFoundError("not deployed");
  if (state == "not deployed") return probe;
  if (state == "stopped") {
    probe.state = AgentProbe::kStopped;
  } else if (state == "died") {
    probe.state = AgentProbe::kDied;
  } else if (absl::ConsumePrefix(&state, "running ") && absl::SimpleAtoi(state, &probe.pid) && probe.pid > 0) {
    probe.state = AgentProbe::kRunning;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unexpected answer from the phone: \"", parts.first, "\""));
  }
  probe.config = ParsePhoneAgentConfig(std::string_view(parts.second.data(), parts.second.size()));
  return probe;
}

absl::StatusOr<int64_t> ParseStartedPid(std::string_view output) {
  absl::string_view line = absl::StripAsciiWhitespace(Absl(output));
  int64_t pid = 0;
  if ((absl::ConsumePrefix(&line, "started ") || absl::ConsumePrefix(&line, "running ")) &&
      absl::SimpleAtoi(line, &pid) && pid > 0) {
    return pid;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("the agent did not start: \"", absl::StripAsciiWhitespace(Absl(output)), "\""));
}

}  // namespace memfleet::cli
