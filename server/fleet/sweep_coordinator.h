// SweepCoordinator: runs sweeps — "capture now" to every matching online agent — and tracks each
// selected device's state (sent, capturing, stored, failed, offline, timed_out) until every device is
// done or the deadline passes; devices that do not answer in time become timed_out, never waited on
// forever. Sweeps are recorded in the store when they start and when they finish.
//
//   absl::StatusOr<std::string> id = sweeps.StartSweep(selector, std::chrono::seconds(60));
//   size_t cursor = 0;
//   for (;;) {
//     absl::StatusOr<SweepUpdate> u = sweeps.WaitForProgress(*id, cursor, std::chrono::milliseconds(250));
//     for (const SweepEvent& e : u->events) Show(e);
//     cursor = u->next_cursor;
//     if (u->finished) break;
//   }
//
// The ingest reports what agents do (OnCapturing / OnStored / OnFailed). A device in a final state
// (stored, failed, offline, timed_out) keeps it. Thread-safe; deadlines are tasks on its TaskRunner
// (server/core/task_runner.h), one at each running sweep's deadline.
#ifndef MEMFLEET_SERVER_FLEET_SWEEP_COORDINATOR_H_
#define MEMFLEET_SERVER_FLEET_SWEEP_COORDINATOR_H_

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
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
#include "capture/labels.h"
#include "selector/selector.h"
#include "storage/query_store.h"
#include "storage/sweep_store.h"

namespace memfleet::server {

enum class SweepState { kSent, kCapturing, kStored, kFailed, kOffline, kTimedOut };
// "sent", "capturing", "stored", "failed", "offline", "timed_out" (as the store records them).
const char* SweepStateName(SweepState state);
// The stored state of a device whose sweep was cut by the end of a server process (kill -9, a crash)
// before it answered: only ever written by CloseInterruptedSweeps, never seen on a live sweep.
inline constexpr char kInterruptedStateName[] = "interrupted";
bool IsFinalState(SweepState state);

struct SweepEvent {
  std::string device_id;
  SweepState state = SweepState::kSent;
  std::string message;
  std::string capture_id;
};

struct SweepUpdate {
  std::vector<SweepEvent> events;  // every event after the cursor, in order
  size_t next_cursor = 0;
  bool finished = false;
  uint32_t devices_total = 0;
  uint32_t devices_done = 0;  // devices in a final state
  std::map<SweepState, uint32_t> state_counts;
};

// An agent another server holds (servers sharing one database: server/fleet/fleet_link.h).
struct RemoteAgent {
  storage::DeviceRecord device;  // its Hello's facts, for the selector
  std::string server_id;
};

// How a sweep reaches the agents other servers hold, and how the news of sweeps they relay here goes
// back. Implemented by FleetLink; absent (nullptr) on a server alone with its database.
class SweepRelayer {
 public:
  virtual ~SweepRelayer() = default;
  // Agents online on other servers, none of them in this server's registry.
  virtual absl::StatusOr<std::vector<RemoteAgent>> RemoteAgents() = 0;
  // Asks the agents' servers to send CaptureNow{sweep_id}; their progress comes back through
  // SweepCoordinator::OnRemoteState until Unwatch (the sweep finished).
  virtual absl::Status Relay(const std::string& sweep_id, const std::vector<RemoteAgent>& agents,
                             const capture::Labels& labels, bool full_smaps) = 0;
  virtual void Unwatch(const std::string& sweep_id) = 0;
  // The ingest's news of a sweep this server does not run: one another server relayed here (else ignored).
  virtual void OnRelayedState(const std::string& sweep_id, const std::string& device_id, SweepState state,
                              const std::string& capture_id, const std::string& message) = 0;
  // The labels of a relayed sweep's captures; empty for any other.
  virtual capture::Labels RelayedLabels(const std::string& sweep_id, const std::string& device_id) = 0;
  // SweepCoordinator::ClaimAnswer (`claim`) or IsAnswer for a sweep another server relayed here: whether
  // that sweep's command was delivered to `device_id` here and `capture_id` is (or becomes) its answer.
  virtual bool RelayedAnswer(const std::string& sweep_id, const std::string& device_id, const std::string& capture_id,
                             bool claim) = 0;
};

class SweepCoordinator : public RegistryListener {
 public:
  struct Options {
    std::chrono::milliseconds default_deadline{std::chrono::seconds(60)};  // for a deadline of 0
    std::chrono::milliseconds max_deadline{std::chrono::hours(1)};
    size_t keep_finished = 64;  // finished sweeps kept in memory for late WaitForProgress calls
    // ... and at most this many devices over all of them (the newest finished sweep is always kept): a
    // finished sweep holds ~1 KB a device (states, events, record), so 64 sweeps of 5,000 devices would
    // hold ~300 MiB. Its results stay in the store.
    size_t keep_finished_devices = 20000;
    std::function<std::string()> now;  // RFC 3339 wall clock; null: NowRfc3339
    SteadyClock* clock = nullptr;      // sweep deadlines are measured on it; null: RealSteadyClock()
    SweepRelayer* relayer = nullptr;   // the agents of other servers; null: this server's only
    std::string server_id;             // recorded with each sweep (servers sharing the database); "" alone
    // This server's agents asked at once per sweep: the next is asked when one of them is done (stored,
    // failed, gone). A sweep over more phones than the server stores in a moment would otherwise have
    // them all capture at once and queue their uploads, each ack waiting for the whole sweep; in turns,
    // each phone is asked when its capture can be stored, and the sweep takes as long either way.
    // 0: all at once.
    size_t max_asked_at_once = 256;
  };

  // Records sweeps in `sweeps`; selects among the devices `devices` knows.
  SweepCoordinator(storage::SweepStore& sweeps, storage::QueryStore& devices, AgentRegistry& registry, Options options);
  // Over one store that is both (a storage::Store).
  template <typename SweepAndQueryStore>
  SweepCoordinator(SweepAndQueryStore& store, AgentRegistry& registry, Options options)
      : SweepCoordinator(store, store, registry, std::move(options)) {}
  template <typename SweepAndQueryStore>
  SweepCoordinator(SweepAndQueryStore& store, AgentRegistry& registry)
      : SweepCoordinator(store, store, registry, Options{}) {}
  SweepCoordinator(const SweepCoordinator&) = delete;
  SweepCoordinator& operator=(const SweepCoordinator&) = delete;
  ~SweepCoordinator() override;  // Shutdown()

  // Selects devices (online agents and devices the store knows; with label terms, only devices with a
  // stored capture carrying them), sends CaptureNow{sweep_id} to the online ones and returns the sweep id.
  // A deadline of 0 is the default; longer than max_deadline is InvalidArgument. Unavailable after
  // Shutdown or when the store cannot record the sweep. `labels` (checked by the caller) go on every
  // capture the sweep's devices send for it (LabelsFor). `full_smaps`: each device reads full smaps for
  // every process in the capture it sends for the sweep (the heaps need it).
  absl::StatusOr<std::string> StartSweep(const selector::Selector& selector, std::chrono::milliseconds deadline,
                                         const capture::Labels& labels = {}, bool full_smaps = false);

  // The labels of a sweep for a capture `device_id` sent for it; empty for an unknown (or long finished)
  // sweep, or a device the sweep did not select. Held in memory only: a capture that arrives after a
  // server restart loses its sweep's labels (the sweep itself was ended as interrupted).
  capture::Labels LabelsFor(const std::string& sweep_id, const std::string& device_id) const ABSL_LOCKS_EXCLUDED(mu_);

  // Whether a capture `device_id` sends naming `sweep_id` is that device's answer to a sweep that asked it:
  // the sweep (this server's, or one another server relayed here) sent the device its CaptureNow, and this
  // is the first capture the device sent for it, or that same capture again (a resend). The first call
  // for a device makes `capture_id` its answer. Any other capture naming the sweep — another device's,
  // a second one, an id no sweep has, a sweep long finished or from before a restart — is not: the ingest
  // stores it as a periodic capture, without the sweep's id, labels or priority (docs/labels.md).
  bool ClaimAnswer(const std::string& sweep_id, const std::string& device_id, const std::string& capture_id)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The same answer without claiming it: whether the capture's upload may go ahead of periodic ones.
  bool IsAnswer(const std::string& sweep_id, const std::string& device_id, const std::string& capture_id)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Waits until the sweep has events after `cursor`, is finished, or `max_wait` passed. NotFound for an
  // unknown (or long finished) sweep.
  absl::StatusOr<SweepUpdate> WaitForProgress(const std::string& sweep_id, size_t cursor,
                                              std::chrono::milliseconds max_wait);

  // From the ingest. Unknown sweeps, devices outside the sweep and devices in a final state are ignored.
  void OnCapturing(const std::string& sweep_id, const std::string& device_id, const std::string& capture_id);
  void OnStored(const std::string& sweep_id, const std::string& device_id, const std::string& capture_id);
  void OnFailed(const std::string& sweep_id, const std::string& device_id, const std::string& capture_id,
                const std::string& message);

  // A relayed device's state as its server recorded it (from the relayer).
  void OnRemoteState(const std::string& sweep_id, const std::string& device_id, SweepState state,
                     const std::string& capture_id, const std::string& message);

  // RegistryListener: an agent that goes offline fails in every running sweep still waiting for it.
  void OnOnline(const AgentSession& /*session*/) override {}
  void OnOffline(const AgentSession& session) override ABSL_LOCKS_EXCLUDED(mu_);

  // Sweeps started since construction, and those not finished yet (for /metrics).
  struct Counts {
    uint64_t started = 0;
    uint64_t running = 0;
  };
  Counts CountSweeps() const ABSL_LOCKS_EXCLUDED(mu_);

  // Stops the deadline tasks and finishes running sweeps (their waiting devices fail with "server shutting
  // down"). Idempotent.
  void Shutdown();

  // At a server's start, before it takes calls: the sweeps the store shows running were left by an
  // earlier process that died without Shutdown, and nothing will answer them — unless another server
  // sharing the database runs it: a sweep recorded by a server in `live_servers` other than this one
  // (options.server_id) is left running. Each other is recorded finished now, its devices still sent or
  // capturing as "interrupted". Returns how many were closed.
  absl::StatusOr<size_t> CloseInterruptedSweeps(const std::set<std::string>& live_servers = {});

 private:
  struct Sweep {
    std::string id;
    storage::SweepRecord record;  // states kept current
    std::map<std::string, SweepState> states;
    capture::Labels labels;
    std::set<std::string> asked;                 // devices sent (or relayed) its CaptureNow
    std::deque<std::string> turns;               // this server's devices waiting for their turn, in order
    std::set<std::string> waiting_turn;          // ... the ones still waiting (a device gone leaves it)
    std::set<std::string> open_here;             // this server's devices asked and not done yet
    v1::ServerMessage command;                   // the CaptureNow its devices are sent
    bool in_turns = false;                       // more devices here than are asked at once
    std::map<std::string, std::string> answers;  // device -> the capture that answers it (ClaimAnswer)
    std::vector<SweepEvent> events;
    TaskRunner::TaskId expiry = TaskRunner::kNoTask;  // the task at its deadline
    bool finished = false;                            // every device final: no more changes
    bool recorded = false;  // finished and written to the store: only now do waiters see the end
    uint32_t done = 0;
  };

  // Asks the sweep's devices whose turn has come (Options::max_asked_at_once), until none is left to ask
  // or the window is full; a device whose agent has gone meanwhile is marked offline.
  void AskInTurn(const std::string& sweep_id) ABSL_LOCKS_EXCLUDED(mu_);
  // The devices whose turn has come, taken from `sweep.turns` and counted as asked.
  std::vector<std::string> TakeTurnsLocked(Sweep& sweep) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Applies a state change under mu_; returns the record to persist when it finished the sweep.
  std::unique_ptr<storage::SweepRecord> ChangeLocked(Sweep& sweep, const std::string& device_id, SweepState state,
                                                     const std::string& capture_id, const std::string& message)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::unique_ptr<storage::SweepRecord> FinishLocked(Sweep& sweep) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // ClaimAnswer (`claim`) or IsAnswer; nullopt when the sweep is not this server's (running or recent).
  std::optional<bool> LocalAnswer(const std::string& sweep_id, const std::string& device_id,
                                  const std::string& capture_id, bool claim) ABSL_LOCKS_EXCLUDED(mu_);
  // The device was not sent the sweep's command after all (it went offline first, its server is gone).
  void Unask(const std::string& sweep_id, const std::string& device_id) ABSL_LOCKS_EXCLUDED(mu_);
  // Returns false when the sweep is not this server's (running or recent).
  bool Change(const std::string& sweep_id, const std::string& device_id, SweepState state,
              const std::string& capture_id, const std::string& message) ABSL_LOCKS_EXCLUDED(mu_);
  // Change, or the relayer's when the sweep is another server's.
  void ChangeOrRelay(const std::string& sweep_id, const std::string& device_id, SweepState state,
                     const std::string& capture_id, const std::string& message) ABSL_LOCKS_EXCLUDED(mu_);
  // The online agents of this server and (with a relayer) the others', as device records.
  struct Target {
    storage::DeviceRecord device;
    std::string server_id;  // "" for this server's
  };
  std::vector<Target> OnlineTargets(const std::map<std::string, storage::DeviceRecord>& known);
  void Persist(const storage::SweepRecord& record) ABSL_LOCKS_EXCLUDED(mu_);
  // The task at a sweep's deadline: its devices still waiting time out.
  void TimeOut(const std::string& sweep_id) ABSL_LOCKS_EXCLUDED(mu_);
  void EvictLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string NewSweepIdLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Static, so not checked by the analysis: called with mu_ held, as the Sweep it reads is guarded by it.
  static SweepUpdate UpdateLocked(const Sweep& sweep, size_t cursor);

  storage::SweepStore& sweep_store_;
  storage::QueryStore& device_store_;
  AgentRegistry& registry_;
  const Options options_;

  // Also guards every Sweep reachable from sweeps_ (the analysis cannot name it there).
  mutable absl::Mutex mu_;
  absl::CondVar changed_;  // any sweep changed (waiters re-check theirs)
  std::map<std::string, std::shared_ptr<Sweep>> sweeps_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> finished_order_ ABSL_GUARDED_BY(mu_);
  size_t finished_devices_ ABSL_GUARDED_BY(mu_) = 0;  // devices over the finished sweeps kept
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t next_serial_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t started_ ABSL_GUARDED_BY(mu_) = 0;
  TaskRunner deadlines_;  // last: its thread starts after everything its tasks use
};

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_FLEET_SWEEP_COORDINATOR_H_
