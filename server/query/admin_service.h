// AdminService: the fleet's administration over gRPC, for admin tokens only — today the agent tokens
// `memfleet agents deploy --mint-tokens` puts on each phone (docs/deploy.md). The secrets it mints go to
// the caller once and are stored only as hashes, as `memfleet-server token add` does.
//
//   AdminService admin(store, authorizer);   // a Store is a TokenStore
//   builder.RegisterService(&admin);
//
// Thread-safe as the store is.
#ifndef MEMFLEET_SERVER_QUERY_ADMIN_SERVICE_H_
#define MEMFLEET_SERVER_QUERY_ADMIN_SERVICE_H_

#include <grpcpp/grpcpp.h>

#include "memfleet/v1/query_service.grpc.pb.h"
#include "server/security/authorizer.h"
#include "storage/token_store.h"

namespace memfleet::server {

class AdminService final : public v1::AdminService::Service {
 public:
  AdminService(storage::TokenStore& tokens, const security::Authorizer& authorizer)
      : tokens_(tokens), authorizer_(authorizer) {}

  grpc::Status MintAgentToken(grpc::ServerContext* context, const v1::MintAgentTokenRequest* request,
                              v1::MintAgentTokenResponse* response) override;

 private:
  storage::TokenStore& tokens_;
  const security::Authorizer& authorizer_;
};

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_QUERY_ADMIN_SERVICE_H_
