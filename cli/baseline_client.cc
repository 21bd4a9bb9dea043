// ServerClient's BaselineService calls, kept apart from the query calls in server_client.cc.
#include <memory>

#include "cli/server_client.h"

namespace memfleet::cli {

// The four calls differ only in names; a macro keeps them from drifting apart.
#define MEMFLEET_BASELINE_RPC(Method, Request, Response)                                        \
  absl::StatusOr<v1::Response> ServerClient::Method(const v1::Request& request) {               \
    std::unique_ptr<v1::BaselineService::Stub> stub = v1::BaselineService::NewStub(channel_);   \
    grpc::ClientContext context;                                                                \
    SetDeadline(context, deadline_);                                                            \
    v1::Response response;                                                                      \
    absl::Status s = Translate(stub->Method(&context, request, &response), #Method, deadline_); \
    if (!s.ok()) return s;                                                                      \
    return response;                                                                            \
  }

MEMFLEET_BASELINE_RPC(ImportBaseline, ImportBaselineRequest, ImportBaselineResponse)
MEMFLEET_BASELINE_RPC(GetBaseline, GetBaselineRequest, GetBaselineResponse)
MEMFLEET_BASELINE_RPC(CheckBaseline, CheckBaselineRequest, CheckBaselineResponse)
MEMFLEET_BASELINE_RPC(Regressions, RegressionsRequest, RegressionsResponse)

#undef MEMFLEET_BASELINE_RPC

}  // namespace memfleet::cli
