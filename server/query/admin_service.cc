#include "server/query/admin_service.h"

#include "absl/strings/str_cat.h"
#include "server/core/clock.h"
#include "server/core/grpc_status.h"
#include "server/security/token_admin.h"

namespace memfleet::server {

grpc::Status AdminService::MintAgentToken(grpc::ServerContext* context, const v1::MintAgentTokenRequest* request,
                                          v1::MintAgentTokenResponse* response) {
  security::Principal principal;
  if (grpc::Status s = security::AuthorizeCall(authorizer_, context, "/memfleet.v1.AdminService/MintAgentToken",
                                               &principal);
      !s.ok()) {
    LogLine(absl::StrCat("MintAgentToken from ", context->peer(), " refused: ", s.error_message()));
    return s;
  }
  absl::StatusOr<security::MintedAgentToken> minted = security::MintAgentToken(
      tokens_, request->device_id(), request->current_token(), request->rotate(), NowRfc3339());
  if (!minted.ok()) return ToGrpcStatus(minted.status());
  // The name only: the secret is the caller's to push, never the log's.
  if (!minted->secret.empty()) {
    LogLine(absl::StrCat("agent token ", minted->name, " minted for device ", request->device_id(), " by ",
                         principal.token_name.empty() ? "an open server's caller" : principal.token_name,
                         minted->revoked_name.empty() ? "" : absl::StrCat(", ", minted->revoked_name, " revoked")));
  }
  response->set_token(minted->secret);
  response->set_token_name(minted->name);
  response->set_revoked_token_name(minted->revoked_name);
  return grpc::Status::OK;
}

}  // namespace memfleet::server
