// absl::Status -> grpc::Status: the codes are the same numbers (translated only in server/ and agent/
// transport code, so the engine and storage stay free of gRPC).
//
//   return ToGrpcStatus(store.PutSweep(record));
//
// Header only; no state.
#ifndef MEMFLEET_SERVER_CORE_GRPC_STATUS_H_
#define MEMFLEET_SERVER_CORE_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include <string>

#include "absl/status/status.h"

namespace memfleet::server {

inline grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

// The two answers every service gives a request it cannot serve as asked.
inline grpc::Status Invalid(const std::string& message) {
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, message);
}
inline grpc::Status NotFound(const std::string& message) { return grpc::Status(grpc::StatusCode::NOT_FOUND, message); }

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_CORE_GRPC_STATUS_H_
