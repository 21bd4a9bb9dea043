#include "cli/commands/server_command.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace memfleet::cli {

void InheritGlobalOptions(const ServerArgs& global, ServerArgs& args) {
  for (auto [field, from] : {std::pair{&args.server, &global.server}, std::pair{&args.ca_cert, &global.ca_cert},
                             std::pair{&args.token, &global.token}, std::pair{&args.token_file, &global.token_file}}) {
    if (field->empty()) *field = *from;
  }
  args.json = args.json || global.json;
  args.csv = args.csv || global.csv;
}

bool AnyOptionSet(const ServerArgs& args) {
  return !args.server.empty() || !args.ca_cert.empty() || !args.token.empty() || !args.token_file.empty() ||
         args.json || args.csv;
}

absl::StatusOr<OutputFormat> OutputFormatOf(const ServerArgs& args) {
  if (args.json && args.csv) return absl::InvalidArgumentError("give --json or --csv, not both");
  if (args.json) return OutputFormat::kJson;
  if (args.csv) return OutputFormat::kCsv;
  return OutputFormat::kTable;
}

namespace {

absl::StatusOr<std::string> ReadWholeFile(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  if (!in || text.str().empty()) {
    return absl::InvalidArgumentError(absl::StrCat("memfleet: cannot read ", what, " ", path));
  }
  return text.str();
}

std::string EnvOr(const std::optional<std::string>& stand_in, const char* name) {
  if (stand_in.has_value()) return *stand_in;
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

}  // namespace

absl::StatusOr<ClientSecurity> ClientSecurityOf(const ServerArgs& args) {
  ClientSecurity security;
  std::string ca_file = args.ca_cert.empty() ? EnvOr(args.env_ca_cert, kCaCertEnvVar) : args.ca_cert;
  if (!ca_file.empty()) {
    absl::StatusOr<std::string> pem = ReadWholeFile(ca_file, args.ca_cert.empty() ? "$MEMFLEET_CA_CERT" : "--ca-cert");
    if (!pem.ok()) return pem.status();
    security.ca_cert_pem = *pem;
  }
  if (!args.token.empty()) {
    security.token = args.token;
  } else if (!args.token_file.empty()) {
    absl::StatusOr<std::string> text = ReadWholeFile(args.token_file, "--token-file");
    if (!text.ok()) return text.status();
    security.token = *text;
  } else {
    security.token = EnvOr(args.env_token, kTokenEnvVar);
  }
  while (!security.token.empty() &&
         (security.token.back() == '\n' || security.token.back() == '\r' || security.token.back() == ' ')) {
    security.token.pop_back();
  }
  for (char c : security.token) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f) {
      return absl::InvalidArgumentError("memfleet: the token has a space or control character; check --token");
    }
  }
  return security;
}

absl::StatusOr<std::unique_ptr<ServerClient>> ConnectToServer(const ServerArgs& args) {
  const char* env = args.env_server ? args.env_server->c_str() : std::getenv(kServerEnvVar);
  absl::StatusOr<std::string> address = ResolveServerAddress(args.server, env);
  if (!address.ok()) return address.status();
  absl::StatusOr<ClientSecurity> security = ClientSecurityOf(args);
  if (!security.ok()) return security.status();
  return std::make_unique<ServerClient>(*address, *std::move(security));
}

int ExitCodeFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return kExitOk;
    case absl::StatusCode::kInvalidArgument:
      return kExitUsage;
    case absl::StatusCode::kNotFound:
      return kExitNothingToCheck;
    default:
      return kExitFailed;
  }
}

int PrintFailure(const absl::Status& status, const std::string& command, std::ostream& err) {
  std::string message(status.message());
  if (!absl::StartsWith(message, "memfleet")) message = "memfleet " + command + ": " + message;
  // Server messages quote device ids and names: escaped like any device text.
  err << TerminalSafeLines(message) << "\n";
  return ExitCodeFor(status);
}

int64_t NowUnixSeconds(const std::optional<std::chrono::system_clock::time_point>& now) {
  auto t = now ? *now : std::chrono::system_clock::now();
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

}  // namespace memfleet::cli
