#include "cli/server_client.h"

#include <charconv>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace memfleet::cli {
namespace {

// A report of a device with hundreds of processes is a few hundred kB; leave room well past gRPC's
// 4 MB default so a big phone never fails with RESOURCE_EXHAUSTED.
constexpr int kMaxReceiveBytes = 64 * 1024 * 1024;

bool ValidPort(std::string_view port) {
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  return ec == std::errc() && end == port.data() + port.size() && value >= 1 && value <= 65535;
}

absl::Status CheckAddress(const std::string& address, const char* origin) {
  for (const char* scheme : {"unix:", "unix-abstract:", "dns:", "ipv4:", "ipv6:"}) {
    if (absl::StartsWith(address, scheme)) return absl::OkStatus();
  }
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("memfleet: ", origin, " \"", address, "\" is not HOST:PORT (",
                                                   std::string(why), "), e.g. 127.0.0.1:7070"));
  };
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) return bad("no :PORT");
  std::string_view host(address.data(), colon);
  if (host.empty()) return bad("no host");
  if (host.find(':') != std::string_view::npos && !(host.front() == '[' && host.back() == ']')) {
    return bad("an IPv6 host goes in brackets, e.g. [::1]:7070");
  }
  if (!ValidPort(std::string_view(address).substr(colon + 1))) return bad("the port must be 1..65535");
  return absl::OkStatus();
}

// gRPC's detail when the peer accepted the TCP connection and then closed it (a TLS port meeting
// plaintext says "Socket closed"); not when nothing listens ("Connection refused") or the name is unknown.
bool HungUpDuringSetup(const std::string& detail) {
  return detail.find("Socket closed") != std::string::npos || detail.find("Connection reset") != std::string::npos;
}

}  // namespace

absl::StatusOr<std::string> ResolveServerAddress(const std::string& flag_value, const char* env_value) {
  if (!flag_value.empty()) {
    absl::Status ok = CheckAddress(flag_value, "--server");
    if (!ok.ok()) return ok;
    return flag_value;
  }
  if (env_value != nullptr && env_value[0] != '\0') {
    std::string address = env_value;
    absl::Status ok = CheckAddress(address, "$MEMFLEET_SERVER");
    if (!ok.ok()) return ok;
    return address;
  }
  return absl::InvalidArgumentError(
      "memfleet: no server given: pass --server HOST:PORT (e.g. --server 127.0.0.1:7070) or set "
      "MEMFLEET_SERVER=HOST:PORT in the environment");
}

absl::Status TranslateRpcStatus(const grpc::Status& status, std::string_view rpc, std::string_view address,
                                std::chrono::seconds deadline) {
  const std::string where(address);
  const std::string detail = status.error_message();
  switch (status.error_code()) {
    case grpc::StatusCode::OK:
      return absl::OkStatus();
    case grpc::StatusCode::UNAVAILABLE:
      return absl::UnavailableError(
          absl::StrCat("memfleet: cannot reach the server at ", where, " (is memfleet-server running?)"));
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return absl::DeadlineExceededError(absl::StrCat("memfleet: the server at ", where, " did not answer ",
                                                      std::string(rpc), " within ", deadline.count(), " s"));
    case grpc::StatusCode::NOT_FOUND:
      return absl::NotFoundError(absl::StrCat("memfleet: ", detail.empty() ? "not found" : detail));
    case grpc::StatusCode::INVALID_ARGUMENT:
      return absl::InvalidArgumentError(absl::StrCat("memfleet: ", detail.empty() ? "invalid argument" : detail));
    case grpc::StatusCode::UNIMPLEMENTED:
      return absl::UnimplementedError(absl::StrCat("memfleet: the server at ", where, " does not offer ",
                                                   std::string(rpc), " (is it an older memfleet-server?)"));
    case grpc::StatusCode::UNAUTHENTICATED:
      // The server's reason, and how to give a token unless the reason says it already.
      return absl::UnauthenticatedError(
          absl::StrCat("memfleet: the server at ", where, " refused the call: ", detail,
                       detail.find("--token") != std::string::npos
                           ? ""
                           : " (give a token with --token T, --token-file FILE or $MEMFLEET_TOKEN)"));
    case grpc::StatusCode::PERMISSION_DENIED:
      return absl::PermissionDeniedError(absl::StrCat("memfleet: permission denied: ", detail));
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return absl::ResourceExhaustedError(absl::StrCat("memfleet: ", std::string(rpc), " answer from ", where,
                                                       " is too large or the server is busy: ", detail));
    default:
      return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                          absl::StrCat("memfleet: ", std::string(rpc), " failed at ", where, ": ",
                                       detail.empty() ? "error code " + std::to_string(status.error_code()) : detail));
  }
}

ServerClient::ServerClient(std::string address, std::chrono::seconds deadline)
    : ServerClient(std::move(address), ClientSecurity(), deadline) {}

ServerClient::ServerClient(std::string address, ClientSecurity security, std::chrono::seconds deadline)
    : address_(std::move(address)), deadline_(deadline), security_(std::move(security)) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxReceiveBytes);
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (!security_.ca_cert_pem.empty()) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = security_.ca_cert_pem;
    credentials = grpc::SslCredentials(ssl);
  }
  channel_ = grpc::CreateCustomChannel(address_, credentials, args);
  stub_ = v1::QueryService::NewStub(channel_);
}

void ServerClient::SetDeadline(grpc::ClientContext& context, std::chrono::seconds deadline) const {
  context.set_deadline(std::chrono::system_clock::now() + deadline);
  if (!security_.token.empty()) context.AddMetadata("authorization", absl::StrCat("Bearer ", security_.token));
}

absl::Status ServerClient::Translate(const grpc::Status& status, std::string_view rpc,
                                     std::chrono::seconds deadline) const {
  absl::Status s = TranslateRpcStatus(status, rpc, address_, deadline);
  if (s.code() != absl::StatusCode::kUnavailable) return s;
  // A failed TLS handshake looks like an unreachable server to gRPC; say what else to check.
  if (!security_.ca_cert_pem.empty()) {
    return absl::UnavailableError(
        absl::StrCat(s.message(),
                     "; with --ca-cert: does the server use TLS, and is its certificate signed by that CA and "
                     "issued for the host name in --server?"));
  }
  // Something listens but dropped the connection unanswered: what a TLS port does to plaintext.
  if (HungUpDuringSetup(status.error_message())) {
    return absl::UnavailableError(
        absl::StrCat(s.message(), "; something at ", address_,
                     " closed the connection unanswered: if the server uses TLS, pass --ca-cert FILE (or set $",
                     kCaCertEnvVar, ")"));
  }
  return s;
}

absl::StatusOr<v1::ListDevicesResponse> ServerClient::ListDevices(const v1::ListDevicesRequest& request) {
  grpc::ClientContext context;
  SetDeadline(context, deadline_);
  v1::ListDevicesResponse response;
  absl::Status s = Translate(stub_->ListDevices(&context, request, &response), "ListDevices", deadline_);
  if (!s.ok()) return s;
  return response;
}

absl::StatusOr<v1::GetReportResponse> ServerClient::GetReport(const v1::GetReportRequest& request) {
  grpc::ClientContext context;
  SetDeadline(context, deadline_);
  v1::GetReportResponse response;
  absl::Status s = Translate(stub_->GetReport(&context, request, &response), "GetReport", deadline_);
  if (!s.ok()) return s;
  return response;
}

absl::StatusOr<v1::ProcessHistoryResponse> ServerClient::GetProcessHistory(const v1::ProcessHistoryRequest& request) {
  grpc::ClientContext context;
  SetDeadline(context, deadline_);
  v1::ProcessHistoryResponse response;
  absl::Status s = Translate(stub_->GetProcessHistory(&context, request, &response), "GetProcessHistory", deadline_);
  if (!s.ok()) return s;
  return response;
}

absl::StatusOr<v1::FleetResponse> ServerClient::GetFleet(const v1::FleetRequest& request) {
  grpc::ClientContext context;
  SetDeadline(context, deadline_);
  v1::FleetResponse response;
  absl::Status s = Translate(stub_->GetFleet(&context, request, &response), "GetFleet", deadline_);
  if (!s.ok()) return s;
  return response;
}

absl::Status ServerClient::StartSweep(const v1::SweepRequest& request,
                                      const std::function<void(const v1::SweepProgress&)>& on_progress) {
  const std::chrono::seconds deadline = std::chrono::seconds(request.deadline_s()) + kSweepDeadlineSlack;
  grpc::ClientContext context;
  SetDeadline(context, deadline);
  std::unique_ptr<grpc::ClientReader<v1::SweepProgress>> reader = stub_->StartSweep(&context, request);
  v1::SweepProgress progress;
  while (reader->Read(&progress)) on_progress(progress);
  return Translate(reader->Finish(), "StartSweep", deadline);
}

}  // namespace memfleet::cli
