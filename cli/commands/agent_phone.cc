#include "cli/commands/agent_phone.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace memfleet::cli {
namespace {

std::string Trimmed(const std::string& text) { return std::string(absl::StripAsciiWhitespace(text)); }

}  // namespace

absl::StatusOr<AdbResult> AgentPhone::RunAdb(std::vector<std::string> args) {
  args.insert(args.begin(), {"-s", serial_});
  return adb_.Run(args);
}

absl::Status AgentPhone::AdbOk(std::vector<std::string> args) {
  const std::string what = absl::StrJoin(args, " ");
  absl::StatusOr<AdbResult> result = RunAdb(std::move(args));
  if (!result.ok()) return result.status();
  if (result->exit_code != 0) {
    return absl::UnavailableError(absl::StrCat("adb ", what, ": ", Trimmed(result->output)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> AgentPhone::Shell(const std::string& command) {
  absl::StatusOr<AdbResult> result = RunAdb({"shell", command});
  if (!result.ok()) return result.status();
  if (result->exit_code != 0) {
    return absl::UnavailableError(
        absl::StrCat("adb shell failed (exit ", result->exit_code, "): ", Trimmed(result->output)));
  }
  return std::move(result->output);
}

absl::StatusOr<std::string> AgentPhone::GetProp(const std::string& name) {
  absl::StatusOr<std::string> value = Shell("getprop " + name);
  if (!value.ok()) return value.status();
  return Trimmed(*value);
}

absl::Status AgentPhone::Push(const std::string& local, const std::string& remote) {
  return AdbOk({"push", local, remote});
}

absl::Status AgentPhone::Reverse(int port) {
  const std::string spec = absl::StrCat("tcp:", port);
  return AdbOk({"reverse", spec, spec});
}

absl::Status AgentPhone::RemoveReverse(int port) { return AdbOk({"reverse", "--remove", absl::StrCat("tcp:", port)}); }

bool AgentPhone::ShellIsRoot(const std::string& id_command) {
  absl::StatusOr<std::string> uid = Shell(id_command);
  return uid.ok() && Trimmed(*uid) == "0";
}

AccessLevel AgentPhone::GainAccess() {
  if (ShellIsRoot("id -u")) return AccessLevel::kAdbRoot;
  // `adb root` restarts adbd (the phone drops off the bus for a moment): wait for it before asking again.
  absl::StatusOr<AdbResult> root = RunAdb({"root"});
  if (root.ok() && root->exit_code == 0 && AdbOk({"wait-for-device"}).ok() && ShellIsRoot("id -u")) {
    return AccessLevel::kAdbRoot;
  }
  if (ShellIsRoot(WithAccess(AccessLevel::kSu, "id -u"))) return AccessLevel::kSu;
  return AccessLevel::kShell;
}

absl::Status AgentPhone::RestoreAccess(AccessLevel access) {
  if (access != AccessLevel::kAdbRoot || ShellIsRoot("id -u")) return absl::OkStatus();
  if (absl::Status s = AdbOk({"root"}); !s.ok()) return s;
  if (absl::Status s = AdbOk({"wait-for-device"}); !s.ok()) return s;
  if (!ShellIsRoot("id -u")) return absl::PermissionDeniedError("adb root did not make the shell root");
  return absl::OkStatus();
}

absl::StatusOr<AgentProbe> AgentPhone::Probe() {
  absl::StatusOr<std::string> output = Shell(ProbeAgentCommand());
  if (!output.ok()) return output.status();
  return ParseAgentProbe(*output);
}

absl::StatusOr<std::string> AgentPhone::SelinuxMode() {
  absl::StatusOr<std::string> answer = Shell("getenforce");
  if (!answer.ok()) return answer.status();
  const std::string mode = Trimmed(*answer);
  if (mode == "Enforcing") return std::string("enforcing");
  if (mode == "Permissive") return std::string("permissive");
  if (mode == "Disabled") return std::string("none");
  return absl::InvalidArgumentError("getenforce answered neither Enforcing, Permissive nor Disabled");
}

absl::StatusOr<int64_t> AgentPhone::StartAgent(const PhoneAgentConfig& config) {
  absl::StatusOr<std::string> output = Shell(WithAccess(config.access, StartAgentCommand(config)));
  if (!output.ok()) return output.status();
  return ParseStartedPid(*output);
}

absl::StatusOr<std::string> AgentPhone::StopAgent(AccessLevel access) {
  absl::StatusOr<std::string> output = Shell(WithAccess(access, StopAgentCommand()));
  if (!output.ok()) return output.status();
  return Trimmed(*output);
}

}  // namespace memfleet::cli
