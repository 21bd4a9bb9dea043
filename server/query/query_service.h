// QueryService: what the `memfleet` CLI asks the lab server — devices (online or not, last capture),
// sweeps with streamed progress, reports (latest, at a time, by capture id), per-process history, fleet
// aggregates (min/p50/p90/max per model/platform/soc/build) and re-accounting.
//
//   QueryService queries(store, store, registry, sweeps, pool, authorizer);   // a Store is both parts
//   builder.RegisterService(&queries);
//
// Every input is checked (ids, lengths, selector terms, metric names, times) before it reaches the store:
// INVALID_ARGUMENT; an unknown device or nothing stored: NOT_FOUND with a message for the user.
// Thread-safe; Reaccount runs the engine on the worker pool, not on the gRPC thread.
#ifndef MEMFLEET_SERVER_QUERY_QUERY_SERVICE_H_
#define MEMFLEET_SERVER_QUERY_QUERY_SERVICE_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "memfleet/v1/query_service.grpc.pb.h"
#include "server/fleet/agent_registry.h"
#include "server/fleet/capture_labels.h"
#include "selector/selector.h"
#include "server/fleet/selected_devices.h"
#include "server/security/authorizer.h"
#include "server/fleet/fleet_link.h"
#include "server/fleet/sweep_coordinator.h"
#include "server/core/worker_pool.h"
#include "storage/capture_store.h"
#include "storage/query_store.h"

namespace memfleet::server {

// Nearest-rank percentile (the smallest value with at least p% of the values at or below it) of sorted,
// non-empty `values`; p in [0, 100].
int64_t NearestRankPercentile(const std::vector<int64_t>& sorted_values, int p);

class QueryService final : public v1::QueryService::Service {
 public:
  // Answers from `queries`; re-accounts the raw captures of `captures` (a storage::Store is both). With
  // `fleet` (servers sharing one database), devices online on any server show online, with their server.
  QueryService(storage::QueryStore& queries, storage::CaptureStore& captures, AgentRegistry& registry,
               SweepCoordinator& sweeps, WorkerPool& pool, const security::Authorizer& authorizer,
               FleetLink* fleet = nullptr);

  grpc::Status ListDevices(grpc::ServerContext* context, const v1::ListDevicesRequest* request,
                           v1::ListDevicesResponse* response) override;
  grpc::Status StartSweep(grpc::ServerContext* context, const v1::SweepRequest* request,
                          grpc::ServerWriter<v1::SweepProgress>* writer) override;
  grpc::Status GetReport(grpc::ServerContext* context, const v1::GetReportRequest* request,
                         v1::GetReportResponse* response) override;
  grpc::Status GetProcessHistory(grpc::ServerContext* context, const v1::ProcessHistoryRequest* request,
                                 v1::ProcessHistoryResponse* response) override;
  grpc::Status GetFleet(grpc::ServerContext* context, const v1::FleetRequest* request,
                        v1::FleetResponse* response) override;
  grpc::Status Reaccount(grpc::ServerContext* context, const v1::ReaccountRequest* request,
                         v1::ReaccountResponse* response) override;

 private:
  // NOT_FOUND naming the device when the store has never seen it.
  grpc::Status CheckKnownDevice(const std::string& device_id);
  // The access check every handler makes first (security/authorizer.h); `method` is the short name.
  grpc::Status Authorize(const grpc::ServerContext* context, const char* method);
  // The re-account itself, on the worker pool; the caller holds reaccount_mu_.
  grpc::Status ReaccountLocked(const std::string& device_id, v1::ReaccountResponse* response)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(reaccount_mu_);
  // GetProcessHistory without a process name: one device figure (`metric`, as in FleetRequest's device.*)
  // over the device's captures.
  grpc::Status DeviceHistory(const std::string& device_id, const std::string& metric,
                             const v1::ProcessHistoryRequest& request, v1::ProcessHistoryResponse* response);
  // A history's points and the device's retention marks into `response`.
  grpc::Status AnswerHistory(const std::string& device_id, const std::vector<storage::HistoryRow>& rows,
                             v1::ProcessHistoryResponse* response);
  // The process name `typed` means on the devices of `rows` (common/process_name_match.h): `typed` when
  // some device has it exactly, else the one name whose base name or end it is; InvalidArgument listing
  // the candidates when several are. `typed` itself when no device has anything like it.
  absl::StatusOr<std::string> ResolveFleetProcess(const std::string& typed,
                                                  const std::vector<storage::FleetValueRow>& rows);
  // Fleet rows narrowed to the devices the selector picks, each row's figure read, with label terms,
  // from the device's newest capture carrying them, not from its latest.
  absl::Status ScopeToSelection(const selector::Selector& selector, const std::string& figure,
                                const std::string& process_name, std::vector<storage::FleetValueRow>& rows);

  storage::QueryStore& store_;
  storage::CaptureStore& captures_;
  AgentRegistry& registry_;
  SweepCoordinator& sweeps_;
  WorkerPool& pool_;
  const security::Authorizer& authorizer_;
  FleetLink* const fleet_;
  absl::Mutex reaccount_mu_;  // one re-account at a time
};

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_QUERY_QUERY_SERVICE_H_
