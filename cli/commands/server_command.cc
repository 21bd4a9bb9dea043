#include "cli/commands/server_command.h"

#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/match.h"

namespace memfleet::cli {

absl::StatusOr<OutputFormat> OutputFormatOf(const ServerArgs& args) {
  if (args.json && args.csv) return absl::InvalidArgumentError("give --json or --csv, not both");
  if (args.json) return OutputFormat::kJson;
  if (args.csv) return OutputFormat::kCsv;
  return OutputFormat::kTable;
}

absl::StatusOr<std::unique_ptr<ServerClient>> ConnectToServer(const ServerArgs& args) {
  const char* env = args.env_server ? args.env_server->c_str() : std::getenv(kServerEnvVar);
  absl::StatusOr<std::string> address = ResolveServerAddress(args.server, env);
  if (!address.ok()) return address.status();
  return std::make_unique<ServerClient>(*address);
}

int ExitCodeFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk: return kExitOk;
    case absl::StatusCode::kInvalidArgument: return kExitUsage;
    case absl::StatusCode::kNotFound: return kExitNotFound;
    default: return kExitServerError;
  }
}

int PrintFailure(const absl::Status& status, const std::string& command, std::ostream& err) {
  std::string message(status.message());
  if (!absl::StartsWith(message, "memfleet")) message = "memfleet " + command + ": " + message;
  err << message << "\n";
  return ExitCodeFor(status);
}

int64_t NowUnixSeconds(const std::optional<std::chrono::system_clock::time_point>& now) {
  auto t = now ? *now : std::chrono::system_clock::now();
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

}  // namespace memfleet::cli
