// BaselineService: memory baselines on the lab server (docs/baselines.md) — import a baseline file as a
// new version (admin), show one, check stored reports against it under scheme 1 or 2, and compare two
// builds' distributions of a process's figures (regressions). The rules live in memfleet::baseline;
// this is the gRPC shell that reads the store.
//
//   BaselineService baselines(store, store, authorizer);   // a Store is both parts
//   builder.RegisterService(&baselines);
//
// Inputs are checked before they reach the store (INVALID_ARGUMENT); no baseline or no report:
// NOT_FOUND with a message saying what to run first. Thread-safe (no state of its own).
#ifndef MEMFLEET_SERVER_QUERY_BASELINE_SERVICE_H_
#define MEMFLEET_SERVER_QUERY_BASELINE_SERVICE_H_

#include <grpcpp/grpcpp.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "capture/labels.h"
#include "memfleet/v1/baseline_service.grpc.pb.h"
#include "baseline/baseline_check.h"
#include "server/security/authorizer.h"
#include "storage/baseline_store.h"
#include "storage/query_store.h"

namespace memfleet::server {

class BaselineService final : public v1::BaselineService::Service {
 public:
  // Baselines from `baselines`, the reports they are checked against from `reports` (a storage::Store is both).
  BaselineService(storage::BaselineStore& baselines, storage::QueryStore& reports,
                  const security::Authorizer& authorizer);

  grpc::Status ImportBaseline(grpc::ServerContext* context, const v1::ImportBaselineRequest* request,
                              v1::ImportBaselineResponse* response) override;
  grpc::Status GetBaseline(grpc::ServerContext* context, const v1::GetBaselineRequest* request,
                           v1::GetBaselineResponse* response) override;
  grpc::Status CheckBaseline(grpc::ServerContext* context, const v1::CheckBaselineRequest* request,
                             v1::CheckBaselineResponse* response) override;
  // The check itself, for a caller that authorized the request its own way (the dashboard).
  absl::StatusOr<v1::CheckBaselineResponse> Check(const v1::CheckBaselineRequest& request);
  grpc::Status Regressions(grpc::ServerContext* context, const v1::RegressionsRequest* request,
                           v1::RegressionsResponse* response) override;

 private:
  grpc::Status Authorize(const grpc::ServerContext* context, const char* method);
  // The label.KEY= and agentlabel.KEY= terms of a selector: with them, the reports checked are those of
  // the captures carrying the labels (LabelledReports), not each device's latest.
  static absl::StatusOr<storage::LabelSet> SelectorLabels(const v1::DeviceSelector& selector);
  // Stored reports joined with their device's model and build, kept when the selector's device terms match.
  absl::StatusOr<std::vector<baseline::DeviceSample>> Samples(const std::vector<storage::StoredReport>& reports,
                                                              const v1::DeviceSelector& selector);

  storage::BaselineStore& baselines_;
  storage::QueryStore& store_;
  const security::Authorizer& authorizer_;
};

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_QUERY_BASELINE_SERVICE_H_
