// AdminService: the fleet's administration over gRPC, for admin tokens only — the agent tokens
// `memfleet agents deploy --mint-tokens` puts on each phone (docs/deploy.md), and retiring a device that
// left the farm (`memfleet devices retire`). The secrets it mints go to the caller once and are stored only
// as hashes, as `memfleet-server token add` does.
//
//   AdminService admin(store, store, store, authorizer, registry, fleet_link_or_null);   // a storage::Store
//   builder.RegisterService(&admin);
//
// Thread-safe as the stores and the registry are.
#ifndef MEMFLEET_SERVER_QUERY_ADMIN_SERVICE_H_
#define MEMFLEET_SERVER_QUERY_ADMIN_SERVICE_H_

#include <grpcpp/grpcpp.h>

#include <string>

#include "memfleet/v1/query_service.grpc.pb.h"
#include "server/fleet/agent_registry.h"
#include "server/fleet/fleet_link.h"
#include "server/security/authorizer.h"
#include "storage/capture_store.h"
#include "storage/query_store.h"
#include "storage/token_store.h"

namespace memfleet::server {

class AdminService final : public v1::AdminService::Service {
 public:
  // `tokens`: agent tokens minted, and revoked when their device retires; `devices`: the device read before
  // and after retiring it; `captures`: where it is retired and purged. `fleet`: the servers sharing this
  // database (nullptr for a server alone), whose agents count as connected too.
  AdminService(storage::TokenStore& tokens, storage::QueryStore& devices, storage::CaptureStore& captures,
               const security::Authorizer& authorizer, const AgentRegistry& registry, FleetLink* fleet)
      : tokens_(tokens),
        devices_(devices),
        captures_(captures),
        authorizer_(authorizer),
        registry_(registry),
        fleet_(fleet) {}

  grpc::Status MintAgentToken(grpc::ServerContext* context, const v1::MintAgentTokenRequest* request,
                              v1::MintAgentTokenResponse* response) override;
  grpc::Status RetireDevice(grpc::ServerContext* context, const v1::RetireDeviceRequest* request,
                            v1::RetireDeviceResponse* response) override;

 private:
  grpc::Status Authorize(grpc::ServerContext* context, const char* method, security::Principal* principal);
  // The server holding the device's agent stream ("" when none does), across servers sharing the database.
  absl::StatusOr<std::string> ConnectedAt(const std::string& device_id);

  storage::TokenStore& tokens_;
  storage::QueryStore& devices_;
  storage::CaptureStore& captures_;
  const security::Authorizer& authorizer_;
  const AgentRegistry& registry_;
  FleetLink* fleet_;
};

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_QUERY_ADMIN_SERVICE_H_
