// ServerClient's AdminService calls, kept apart from the query calls in server_client.cc.
#include <memory>

#include "cli/server_client.h"

namespace memfleet::cli {

absl::StatusOr<v1::MintAgentTokenResponse> ServerClient::MintAgentToken(const v1::MintAgentTokenRequest& request) {
  std::unique_ptr<v1::AdminService::Stub> stub = v1::AdminService::NewStub(channel_);
  grpc::ClientContext context;
  SetDeadline(context, deadline_);
  v1::MintAgentTokenResponse response;
  absl::Status s = Translate(stub->MintAgentToken(&context, request, &response), "MintAgentToken", deadline_);
  if (!s.ok()) return s;
  return response;
}

absl::StatusOr<v1::RetireDeviceResponse> ServerClient::RetireDevice(const v1::RetireDeviceRequest& request) {
  std::unique_ptr<v1::AdminService::Stub> stub = v1::AdminService::NewStub(channel_);
  grpc::ClientContext context;
  SetDeadline(context, deadline_);
  v1::RetireDeviceResponse response;
  absl::Status s = Translate(stub->RetireDevice(&context, request, &response), "RetireDevice", deadline_);
  if (!s.ok()) return s;
  return response;
}

}  // namespace memfleet::cli
