// The CLI's side of QueryService: finds the server (--server HOST:PORT, else $MEMFLEET_SERVER), calls it
// with a deadline, and turns RPC failures into messages a user can act on.
//
//   absl::StatusOr<std::string> address = ResolveServerAddress(flag, std::getenv("MEMFLEET_SERVER"));
//   ServerClient client(*address);
//   absl::StatusOr<v1::ListDevicesResponse> devices = client.ListDevices({});
//   // !ok(): "memfleet: cannot reach the server at 127.0.0.1:7070 (is memfleet-server running?)"
//
// One client per command run; calls are blocking and may be made from one thread at a time.
#ifndef MEMFLEET_CLI_SERVER_CLIENT_H_
#define MEMFLEET_CLI_SERVER_CLIENT_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"
#include "memfleet/v1/baseline_service.grpc.pb.h"
#include "memfleet/v1/query_service.grpc.pb.h"

namespace memfleet::cli {

inline constexpr char kServerEnvVar[] = "MEMFLEET_SERVER";
inline constexpr char kTokenEnvVar[] = "MEMFLEET_TOKEN";
inline constexpr char kCaCertEnvVar[] = "MEMFLEET_CA_CERT";
inline constexpr std::chrono::seconds kDefaultRpcDeadline{10};
// A sweep's stream may outlive its device deadline by this much (the server's summary, slow links).
inline constexpr std::chrono::seconds kSweepDeadlineSlack{10};

// The flag wins over the environment; neither is InvalidArgument saying how to set one. The address is
// HOST:PORT ("127.0.0.1:7070", "lab-server:7070", "[::1]:7070") or a gRPC target with a scheme
// ("unix:/run/memfleet.sock", "dns:///lab:7070").
absl::StatusOr<std::string> ResolveServerAddress(const std::string& flag_value, const char* env_value);

// An RPC failure as the user should read it (the message starts with "memfleet: "), same code:
// UNAVAILABLE: the server cannot be reached; DEADLINE_EXCEEDED: no answer within deadline_s;
// NOT_FOUND / INVALID_ARGUMENT: the server's own message (unknown device, nothing stored, bad metric).
absl::Status TranslateRpcStatus(const grpc::Status& status, std::string_view rpc, std::string_view address,
                                std::chrono::seconds deadline);

// How the CLI proves itself to a server with TLS and tokens (docs/security.md). All empty: plaintext, no token.
struct ClientSecurity {
  std::string ca_cert_pem;  // non-empty: TLS, the server's certificate must be signed by this CA
  std::string token;        // non-empty: sent as `authorization: Bearer <token>` on every call
};

class ServerClient {
 public:
  // Does not connect yet: the first call does, and fails fast (UNAVAILABLE) if nothing listens.
  explicit ServerClient(std::string address, std::chrono::seconds deadline = kDefaultRpcDeadline);
  ServerClient(std::string address, ClientSecurity security, std::chrono::seconds deadline = kDefaultRpcDeadline);

  const std::string& address() const { return address_; }

  absl::StatusOr<v1::ListDevicesResponse> ListDevices(const v1::ListDevicesRequest& request);
  absl::StatusOr<v1::GetReportResponse> GetReport(const v1::GetReportRequest& request);
  absl::StatusOr<v1::ProcessHistoryResponse> GetProcessHistory(const v1::ProcessHistoryRequest& request);
  absl::StatusOr<v1::FleetResponse> GetFleet(const v1::FleetRequest& request);

  // Calls on_progress for each streamed message, in order, until the server ends the stream. The
  // deadline is the sweep's own (request.deadline_s) plus kSweepDeadlineSlack.
  absl::Status StartSweep(const v1::SweepRequest& request,
                          const std::function<void(const v1::SweepProgress&)>& on_progress);

  // ---- Administration: AdminService, defined in cli/admin_client.cc ----
  absl::StatusOr<v1::MintAgentTokenResponse> MintAgentToken(const v1::MintAgentTokenRequest& request);
  absl::StatusOr<v1::RetireDeviceResponse> RetireDevice(const v1::RetireDeviceRequest& request);

  // ---- Baselines: BaselineService, defined in cli/baseline_client.cc ----
  absl::StatusOr<v1::ImportBaselineResponse> ImportBaseline(const v1::ImportBaselineRequest& request);
  absl::StatusOr<v1::GetBaselineResponse> GetBaseline(const v1::GetBaselineRequest& request);
  absl::StatusOr<v1::CheckBaselineResponse> CheckBaseline(const v1::CheckBaselineRequest& request);
  absl::StatusOr<v1::RegressionsResponse> Regressions(const v1::RegressionsRequest& request);

 private:
  // Also attaches the token: every call goes through it.
  void SetDeadline(grpc::ClientContext& context, std::chrono::seconds deadline) const;
  absl::Status Translate(const grpc::Status& status, std::string_view rpc, std::chrono::seconds deadline) const;

  std::string address_;
  std::chrono::seconds deadline_;
  ClientSecurity security_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::QueryService::Stub> stub_;
};

}  // namespace memfleet::cli

#endif  // MEMFLEET_CLI_SERVER_CLIENT_H_
