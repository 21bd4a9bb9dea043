// FleetStore: what several servers on one shared database tell each other — which servers are alive and
// which agent streams each one holds (rows with a heartbeat) and the sweep commands one server asks another to deliver
// (relays), with the progress the delivering server writes back. Only a database that several servers
// can share offers it (Store::fleet(): the store on PostgreSQL); a single SQLite server's in-memory registry is the
// truth.
//
//   store.PutSession({.device_id = "sim-101", .server_id = "a:7070", .connected_at = now, .heartbeat_ms = t});
//   store.LiveSessions(t - 30'000);   // every session whose heartbeat is not older than 30 s
//
// Every method is pure, as in store.h. Times in _ms are the writing server's wall clock (ms since the epoch).
#ifndef MEMFLEET_STORAGE_FLEET_STORE_H_
#define MEMFLEET_STORAGE_FLEET_STORE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/capture_store.h"
#include "storage/records.h"

namespace memfleet::storage {

// One agent stream held by one server: its device's Hello facts as `memfleet devices` shows them.
struct SessionRecord {
  std::string device_id;
  std::string server_id;     // the server holding the stream (--server-id)
  std::string connected_at;  // RFC 3339
  int64_t heartbeat_ms = 0;  // refreshed by the holding server every heartbeat period
  std::string model;
  std::string soc;
  std::string build_fingerprint;
  std::string kernel;
  std::string agent_version;
};

// What one server's ingest refused for one device id since that server started.
struct IncidentRecord {
  std::string server_id;
  std::string device_id;
  uint64_t refused_streams = 0;  // streams whose Hello described another device than the id's live stream
  std::string refused_facts;     // the latest refused Hello's facts
  uint64_t future_captures = 0;  // captures dated too far ahead of the server's clock
};

// A re-accounting shared between the servers walking it (FleetStore::ForEachClaimedRawCapture).
struct ReaccountRun {
  int64_t run_id = 0;
  bool joined = false;  // another server had started it
};

// "Capture now for sweep S" for a device another server holds, and what became of it. `state` takes
// sweep_devices' names ("sent", "capturing", "stored", "failed", "offline").
struct SweepRelay {
  std::string sweep_id;
  std::string device_id;
  std::string server_id;    // the server that is to deliver it
  Labels labels;            // the sweep's labels, for the captures it brings
  bool full_smaps = false;  // the sweep asks for full smaps of every process
  std::string state = "sent";
  std::string capture_id;
  std::string message;
};

class FleetStore {
 public:
  virtual ~FleetStore() = default;

  // Records the device's stream as held by session.server_id (a stream that moved replaces the old row).
  virtual absl::Status PutSession(const SessionRecord& session) = 0;
  // Sets the heartbeat of every session `server_id` holds.
  virtual absl::Status TouchSessions(const std::string& server_id, int64_t heartbeat_ms) = 0;
  // Deletes the device's session if `server_id` still holds it (not when it has moved to another server).
  virtual absl::Status DeleteSession(const std::string& device_id, const std::string& server_id) = 0;
  // Sessions with a heartbeat at or after `heartbeat_since_ms`, by device id.
  virtual absl::StatusOr<std::vector<SessionRecord>> LiveSessions(int64_t heartbeat_since_ms) = 0;

  // Records that `server_id` is alive at `heartbeat_ms` (refreshed every heartbeat period, agents or not).
  virtual absl::Status PutServerHeartbeat(const std::string& server_id, int64_t heartbeat_ms) = 0;
  // The servers whose heartbeat is at or after `heartbeat_since_ms`, by id.
  virtual absl::StatusOr<std::vector<std::string>> LiveServers(int64_t heartbeat_since_ms) = 0;
  // Replaces every incident row of `server_id` by `incidents` (each of that server).
  virtual absl::Status PutIncidents(const std::string& server_id, const std::vector<IncidentRecord>& incidents) = 0;
  // The incident rows of the servers whose heartbeat is at or after `heartbeat_since_ms`, by device id then
  // server id.
  virtual absl::StatusOr<std::vector<IncidentRecord>> LiveIncidents(int64_t heartbeat_since_ms) = 0;

  // Records relays for other servers to deliver (state "sent").
  virtual absl::Status PutSweepRelays(const std::vector<SweepRelay>& relays) = 0;
  // The relays addressed to `server_id` not taken yet, marked taken in the same statement (each is
  // delivered once, whichever thread asks).
  virtual absl::StatusOr<std::vector<SweepRelay>> TakeSweepRelays(const std::string& server_id) = 0;
  // Sets a relay's state unless it is already final (stored, failed, offline).
  virtual absl::Status SetSweepRelayState(const std::string& sweep_id, const std::string& device_id,
                                          const std::string& state, const std::string& capture_id,
                                          const std::string& message) = 0;
  // Every relay of the sweep, by device id.
  virtual absl::StatusOr<std::vector<SweepRelay>> SweepRelays(const std::string& sweep_id) = 0;
  // Deletes the sweep's relays (it finished: sweep_devices holds its outcome).
  virtual absl::Status DeleteSweepRelays(const std::string& sweep_id) = 0;

  // Re-accounting shared between servers: each raw capture of the run (`device_id` "" = all) handed to
  // `fn` by one of the servers walking it, joining the unfinished run of the same scope or starting one at
  // `started_at` (SqlStore's comment says how).
  virtual absl::StatusOr<ReaccountRun> ForEachClaimedRawCapture(
      const std::string& device_id, const std::string& started_at,
      const std::function<void(const CaptureStore::RawCapture&)>& fn) = 0;
};

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_FLEET_STORE_H_
