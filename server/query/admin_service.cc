#include "server/query/admin_service.h"

#include <map>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/core/clock.h"
#include "server/core/grpc_status.h"
#include "server/core/validation.h"
#include "server/security/token_admin.h"

namespace memfleet::server {
namespace {

std::string CallerName(const security::Principal& principal) {
  return principal.token_name.empty() ? "an open server's caller" : principal.token_name;
}

}  // namespace

grpc::Status AdminService::Authorize(grpc::ServerContext* context, const char* method, security::Principal* principal) {
  grpc::Status s =
      security::AuthorizeCall(authorizer_, context, absl::StrCat("/memfleet.v1.AdminService/", method), principal);
  if (!s.ok()) LogLine(absl::StrCat(method, " from ", context->peer(), " refused: ", s.error_message()));
  return s;
}

grpc::Status AdminService::MintAgentToken(grpc::ServerContext* context, const v1::MintAgentTokenRequest* request,
                                          v1::MintAgentTokenResponse* response) {
  security::Principal principal;
  if (grpc::Status s = Authorize(context, "MintAgentToken", &principal); !s.ok()) return s;
  absl::StatusOr<security::MintedAgentToken> minted = security::MintAgentToken(
      tokens_, request->device_id(), request->current_token(), request->rotate(), NowRfc3339());
  if (!minted.ok()) return ToGrpcStatus(minted.status());
  // The name only: the secret is the caller's to push, never the log's.
  if (!minted->secret.empty()) {
    LogLine(absl::StrCat("agent token ", minted->name, " minted for device ", request->device_id(), " by ",
                         CallerName(principal),
                         minted->revoked_name.empty() ? "" : absl::StrCat(", ", minted->revoked_name, " revoked")));
  }
  response->set_token(minted->secret);
  response->set_token_name(minted->name);
  response->set_revoked_token_name(minted->revoked_name);
  return grpc::Status::OK;
}

absl::StatusOr<std::string> AdminService::ConnectedAt(const std::string& device_id) {
  if (registry_.IsOnline(device_id)) return fleet_ != nullptr ? fleet_->server_id() : std::string("this server");
  if (fleet_ == nullptr) return std::string();
  absl::StatusOr<std::map<std::string, std::string>> online = fleet_->OnlineServers();
  if (!online.ok()) return online.status();
  auto it = online->find(device_id);
  return it == online->end() ? std::string() : it->second;
}

grpc::Status AdminService::RetireDevice(grpc::ServerContext* context, const v1::RetireDeviceRequest* request,
                                        v1::RetireDeviceResponse* response) {
  security::Principal principal;
  if (grpc::Status s = Authorize(context, "RetireDevice", &principal); !s.ok()) return s;
  const std::string& device_id = request->device_id();
  if (absl::Status s = CheckDeviceId(device_id); !s.ok()) return ToGrpcStatus(s);
  absl::StatusOr<std::optional<storage::DeviceRecord>> device = devices_.GetDevice(device_id);
  if (!device.ok()) return ToGrpcStatus(device.status());
  if (!device->has_value()) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND, absl::StrCat("unknown device \"", device_id, "\""));
  }
  // Its agent's next capture or Hello would make it active again at once.
  absl::StatusOr<std::string> server = ConnectedAt(device_id);
  if (!server.ok()) return ToGrpcStatus(server.status());
  if (!server->empty()) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        absl::StrCat("device \"", device_id, "\" is online (its agent is connected to ", *server,
                                     "): stop its agent first (memfleet agents stop), then retire it"));
  }
  absl::StatusOr<bool> retired = captures_.RetireDevice(device_id, NowRfc3339());
  if (!retired.ok()) return ToGrpcStatus(retired.status());
  absl::StatusOr<std::optional<storage::DeviceRecord>> now_retired = devices_.GetDevice(device_id);
  if (!now_retired.ok()) return ToGrpcStatus(now_retired.status());
  if (!*retired || !now_retired->has_value()) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND, absl::StrCat("device \"", device_id, "\" went meanwhile"));
  }
  response->set_retired_at((*now_retired)->retired_at);
  // A phone that left the farm may not stream again on the token it holds; a retirement that fails here is
  // retried by running it again. An agent deployed back gets a new token (`agents deploy --mint-tokens`).
  absl::StatusOr<std::vector<std::string>> revoked =
      security::RevokeDeviceAgentTokens(tokens_, device_id, NowRfc3339());
  if (!revoked.ok()) return ToGrpcStatus(revoked.status());
  for (const std::string& name : *revoked) response->add_revoked_token_names(name);
  if (request->purge()) {
    absl::StatusOr<uint64_t> deleted = captures_.PurgeDevice(device_id);
    if (!deleted.ok()) return ToGrpcStatus(deleted.status());
    response->set_purged(true);
    response->set_captures_deleted(*deleted);
  }
  LogLine(
      absl::StrCat("device ", device_id, " retired by ", CallerName(principal),
                   request->purge() ? absl::StrCat(" and purged (", response->captures_deleted(), " captures)") : "",
                   revoked->empty() ? "" : absl::StrCat(", agent tokens revoked: ", absl::StrJoin(*revoked, ", "))));
  return grpc::Status::OK;
}

}  // namespace memfleet::server
