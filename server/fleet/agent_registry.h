// AgentRegistry: the agents online right now, by device id — each one's stream (as an AgentSession),
// its Hello's DeviceInfo and when it connected — so sweeps and queries can reach a device; and, per
// device id, what ingest refused since the server started (DeviceIncidents), for `memfleet devices`.
//
//   auto session = std::make_shared<AgentSession>(hello.device(), NowRfc3339(), std::move(sink));
//   registry.Register(session);   // replaces (and cancels) an older stream of the same device, or refuses
//   registry.SendCommand("sim-qcom-101", capture_now);  // false: offline
//   registry.Unregister(session);                      // only if it is still the current one
//
// Thread-safe. gRPC allows one reader and one writer on a stream at a time: the stream's own thread
// reads, and every write (Welcome, acks from worker threads, commands from sweeps) goes through
// AgentSession::Write, which serializes them.
#ifndef MEMFLEET_SERVER_FLEET_AGENT_REGISTRY_H_
#define MEMFLEET_SERVER_FLEET_AGENT_REGISTRY_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "memfleet/v1/agent_service.pb.h"

namespace memfleet::server {

// Where a session's messages go: the gRPC stream in the server, a vector in tests.
class MessageSink {
 public:
  virtual ~MessageSink() = default;
  // False when the stream is broken (the peer went away or the call was cancelled).
  virtual bool Write(const v1::ServerMessage& message) = 0;
  // Ends the call from another thread (the stream's reader then sees its end).
  virtual void Cancel() = 0;
};

class AgentSession {
 public:
  AgentSession(v1::DeviceInfo info, std::string connected_at, std::unique_ptr<MessageSink> sink);
  AgentSession(const AgentSession&) = delete;
  AgentSession& operator=(const AgentSession&) = delete;

  // One write at a time; false after Close() or when the stream is broken.
  bool Write(const v1::ServerMessage& message) ABSL_LOCKS_EXCLUDED(write_mu_, state_mu_);
  // Cancels the call unless it is already closed (a replaced stream; server shutdown).
  void Cancel() ABSL_LOCKS_EXCLUDED(state_mu_);
  // The stream's handler calls this before it returns: later writes are dropped, and Close waits for a
  // write in progress, so nobody touches the stream after its handler is gone.
  void Close() ABSL_LOCKS_EXCLUDED(write_mu_, state_mu_);
  bool cancelled() const ABSL_LOCKS_EXCLUDED(state_mu_);

  const v1::DeviceInfo& info() const { return info_; }
  const std::string& device_id() const { return info_.device_id(); }
  const std::string& connected_at() const { return connected_at_; }

 private:
  const v1::DeviceInfo info_;
  const std::string connected_at_;
  const std::unique_ptr<MessageSink> sink_;                      // Write under write_mu_, Cancel under state_mu_
  absl::Mutex write_mu_;                                         // serializes sink_->Write
  mutable absl::Mutex state_mu_ ABSL_ACQUIRED_AFTER(write_mu_);  // never held across a write
  bool closed_ ABSL_GUARDED_BY(state_mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(state_mu_) = false;
};

struct OnlineAgent {
  v1::DeviceInfo info;
  std::string connected_at;
};

// What ingest refused for one device id since the server started.
struct DeviceIncidents {
  // Streams whose Hello described another device than the id's live stream (Register).
  uint64_t refused_streams = 0;
  std::string refused_facts;  // the latest refused Hello's facts, as FactsText prints them
  // Captures dated further ahead of the server's clock than it allows (CountFutureCapture).
  uint64_t future_captures = 0;

  bool operator==(const DeviceIncidents& o) const {
    return refused_streams == o.refused_streams && refused_facts == o.refused_facts &&
           future_captures == o.future_captures;
  }
};

// True when two Hellos describe the same device: model, SoC, build, kernel and page size agree. The agent
// version may differ (an agent upgraded in place reconnects before its old stream is noticed gone).
bool SameDevice(const v1::DeviceInfo& a, const v1::DeviceInfo& b);
// `model "…", soc "…", build "…", kernel "…", page size N`, each value shortened for a message.
std::string FactsText(const v1::DeviceInfo& info);

// Told when a device's stream becomes its current one and when it stops being so (a replaced stream's
// end is not an offline), on the stream's own thread, outside the registry's lock.
class RegistryListener {
 public:
  virtual ~RegistryListener() = default;
  virtual void OnOnline(const AgentSession& session) = 0;
  virtual void OnOffline(const AgentSession& session) = 0;
};

class AgentRegistry {
 public:
  // Before the first Register; the listener outlives the registry's streams.
  void AddListener(RegistryListener* listener) ABSL_LOCKS_EXCLUDED(mu_);

  // Makes `session` the device's current stream. An older stream of the same device id whose Hello
  // describes the same device (SameDevice: its agent restarted) is cancelled and returned; nullptr when
  // there was none. One that describes another device stays, and `session` is refused: AlreadyExists
  // naming the device id and both devices (two agents configured with one id would otherwise replace
  // each other's streams and mix two phones in one history). Refusals are counted per device id.
  absl::StatusOr<std::shared_ptr<AgentSession>> Register(std::shared_ptr<AgentSession> session);
  // Removes `session` if it is still the device's current stream (a replaced stream must not remove
  // its successor).
  void Unregister(const std::shared_ptr<AgentSession>& session);

  // Writes `message` to the device's stream; false when the device is offline or the write failed.
  bool SendCommand(const std::string& device_id, const v1::ServerMessage& message);
  bool IsOnline(const std::string& device_id) const;
  std::optional<OnlineAgent> Get(const std::string& device_id) const;
  // Sorted by device id.
  std::vector<OnlineAgent> List() const;
  size_t size() const;
  // A capture of the device was refused for a time ahead of the server's clock.
  void CountFutureCapture(const std::string& device_id);
  // All zero when nothing was refused.
  DeviceIncidents Incidents(const std::string& device_id) const;
  // Every device id's, by id (only ids something was refused for).
  std::map<std::string, DeviceIncidents> AllIncidents() const;
  // Cancels every stream (server shutdown); they unregister themselves as their handlers end.
  void CancelAll();

 private:
  std::shared_ptr<AgentSession> Find(const std::string& device_id) const ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<RegistryListener*> Listeners() const ABSL_LOCKS_EXCLUDED(mu_);

  mutable absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<AgentSession>> sessions_ ABSL_GUARDED_BY(mu_);
  // Only ids that said Hello get an entry, as in the store's devices table.
  std::map<std::string, DeviceIncidents> incidents_ ABSL_GUARDED_BY(mu_);
  std::vector<RegistryListener*> listeners_ ABSL_GUARDED_BY(mu_);
};

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_FLEET_AGENT_REGISTRY_H_
