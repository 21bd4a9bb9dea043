// FleetLink: this server's part in a fleet of servers sharing one database (storage/fleet_store.h). It
// keeps a heartbeat of its own, so the others know it is alive, and a session row for each agent stream
// this server holds (written at Hello, its heartbeat refreshed every heartbeat period, deleted at
// disconnect), so every server can tell which agents are online and where; a session whose heartbeat is
// older than the session timeout is offline (its server died). For sweeps it relays: a sweep started here
// reaches the agents other servers hold through relay rows they take and deliver, and their progress is
// read back until the sweep ends.
//
//   FleetLink fleet(*store.fleet(), registry, {.server_id = "lab-a:7070"});
//   registry.AddListener(&fleet);
//   SweepCoordinator sweeps(store, registry, {.relayer = &fleet});
//   fleet.Start(sweeps);   // the heartbeat and relay thread
//   fleet.OnlineServers(); // {"sim-101": "lab-a:7070", "sim-102": "lab-b:7070"}
//
// Thread-safe, except that Start and Stop are called from one thread (LabServer's start and stop). Its
// TaskRunner (server/core/task_runner.h), on the injected steady clock, refreshes heartbeats and polls
// relays.
// Heartbeats carry the wall clock of the server writing them: servers of one fleet keep their clocks
// within a few seconds of each other (NTP), well under session_timeout - heartbeat_period.
#ifndef MEMFLEET_SERVER_FLEET_FLEET_LINK_H_
#define MEMFLEET_SERVER_FLEET_FLEET_LINK_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "server/fleet/agent_registry.h"
#include "server/core/clock.h"
#include "server/core/task_runner.h"
#include "server/fleet/sweep_coordinator.h"
#include "storage/fleet_store.h"

namespace memfleet::server {

struct FleetLinkOptions {
  std::string server_id;  // --server-id; default HOSTNAME:PORT
  std::chrono::milliseconds heartbeat_period{std::chrono::seconds(10)};
  std::chrono::milliseconds session_timeout{std::chrono::seconds(30)};
  std::chrono::milliseconds relay_poll_period{std::chrono::milliseconds(500)};
  SteadyClock* clock = nullptr;          // periods are measured on it; null: RealSteadyClock()
  std::function<int64_t()> wall_now_ms;  // heartbeat times; null: the system clock
};

class FleetLink : public RegistryListener, public SweepRelayer {
 public:
  FleetLink(storage::FleetStore& store, AgentRegistry& registry, FleetLinkOptions options);
  FleetLink(const FleetLink&) = delete;
  FleetLink& operator=(const FleetLink&) = delete;
  ~FleetLink() override;  // Stop()

  // Writes this server's heartbeat (before returning: the servers starting after it see it alive), then
  // starts the heartbeats and relay polls; relayed progress goes to `sweeps`.
  void Start(SweepCoordinator& sweeps) ABSL_LOCKS_EXCLUDED(mu_);
  // Stops them (one in progress finishes first). Idempotent. Session rows stay until their streams end
  // (or go stale).
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

  const std::string& server_id() const { return options_.server_id; }
  // The shared database (the Reaccount RPC claims its captures there).
  storage::FleetStore& store() { return store_; }
  // Device id -> the server holding its stream, for every agent online in the fleet (this server's from
  // its registry, the others' from live session rows).
  absl::StatusOr<std::map<std::string, std::string>> OnlineServers();
  // The servers of the fleet alive now (their heartbeat is not older than the session timeout), this one
  // included once started.
  absl::StatusOr<std::set<std::string>> LiveServers();
  // What ingest refused per device id, summed over the live servers of the fleet (this server's from its
  // registry, the others' as of their last heartbeat); a refused Hello's facts are this server's latest,
  // else another's.
  absl::StatusOr<std::map<std::string, DeviceIncidents>> FleetIncidents();

  // RegistryListener
  void OnOnline(const AgentSession& session) override ABSL_LOCKS_EXCLUDED(mu_);
  void OnOffline(const AgentSession& session) override ABSL_LOCKS_EXCLUDED(mu_);

  // SweepRelayer
  absl::StatusOr<std::vector<RemoteAgent>> RemoteAgents() override;
  absl::Status Relay(const std::string& sweep_id, const std::vector<RemoteAgent>& agents, const capture::Labels& labels,
                     bool full_smaps) override ABSL_LOCKS_EXCLUDED(mu_);
  void Unwatch(const std::string& sweep_id) override ABSL_LOCKS_EXCLUDED(mu_);
  void OnRelayedState(const std::string& sweep_id, const std::string& device_id, SweepState state,
                      const std::string& capture_id, const std::string& message) override ABSL_LOCKS_EXCLUDED(mu_);
  capture::Labels RelayedLabels(const std::string& sweep_id, const std::string& device_id) override
      ABSL_LOCKS_EXCLUDED(mu_);
  bool RelayedAnswer(const std::string& sweep_id, const std::string& device_id, const std::string& capture_id,
                     bool claim) override ABSL_LOCKS_EXCLUDED(mu_);

 private:
  using RelayKey = std::pair<std::string, std::string>;  // sweep id, device id
  struct Delivered {
    capture::Labels labels;
    std::chrono::steady_clock::time_point at;
    std::string answer;  // the capture that answers it, once one named the sweep ("": none yet)
  };

  // Refreshes this server's heartbeat and its sessions', and writes its incidents when they changed.
  void Heartbeat() ABSL_LOCKS_EXCLUDED(mu_);
  void WriteIncidents() ABSL_LOCKS_EXCLUDED(mu_);
  // Delivers the relays addressed here, reads back those of sweeps started here, forgets stale ones.
  void PollRelays() ABSL_LOCKS_EXCLUDED(mu_);
  void DeliverRelays() ABSL_LOCKS_EXCLUDED(mu_);
  void PollWatched() ABSL_LOCKS_EXCLUDED(mu_);
  // Writes a delivered relay's new state; a final one ends it here.
  void RecordRelayed(const RelayKey& key, SweepState state, const std::string& capture_id, const std::string& message)
      ABSL_LOCKS_EXCLUDED(mu_);
  int64_t WallNowMs() const;

  storage::FleetStore& store_;
  AgentRegistry& registry_;
  const FleetLinkOptions options_;
  SweepCoordinator* sweeps_ = nullptr;  // set by Start, before the runner's tasks are posted

  absl::Mutex mu_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::set<std::string> watched_ ABSL_GUARDED_BY(mu_);            // sweeps started here with relays
  std::map<RelayKey, Delivered> delivered_ ABSL_GUARDED_BY(mu_);  // relays this server delivered
  // The incidents last written to the store (nullopt: none yet, so the first heartbeat replaces the rows
  // an earlier process of this server id left).
  std::optional<std::map<std::string, DeviceIncidents>> written_incidents_ ABSL_GUARDED_BY(mu_);
  TaskRunner runner_;  // last: its thread starts after everything its tasks use
};

// Device id -> the server holding its stream, for every agent online: the fleet's (fleet->OnlineServers())
// when `fleet` is not null, else this server's registry's, each mapped to "". What `memfleet devices`, the
// dashboard and /metrics call online, so that every server of a fleet shows the same online devices.
absl::StatusOr<std::map<std::string, std::string>> OnlineDevices(const AgentRegistry& registry, FleetLink* fleet);
// What ingest refused per device id: the fleet's (fleet->FleetIncidents()) when `fleet` is not null, else
// this server's registry's. What `memfleet devices` shows.
absl::StatusOr<std::map<std::string, DeviceIncidents>> RefusedIncidents(const AgentRegistry& registry,
                                                                        FleetLink* fleet);

// "HOSTNAME:PORT": the default --server-id. Port "0" (the system picks one) adds this process's id, so
// two such servers on one host still differ.
std::string DefaultServerId(const std::string& port);

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_FLEET_FLEET_LINK_H_
