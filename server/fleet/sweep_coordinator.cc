#include "server/fleet/sweep_coordinator.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/label_text.h"
#include "server/core/clock.h"
#include "server/fleet/selected_devices.h"

namespace memfleet::server {
namespace {

std::string DeadlineText(std::chrono::milliseconds d) {
  if (d.count() % 1000 == 0) return absl::StrCat(d.count() / 1000, " s");
  return absl::StrCat(d.count(), " ms");
}

}  // namespace

const char* SweepStateName(SweepState state) {
  switch (state) {
    case SweepState::kSent:
      return "sent";
    case SweepState::kCapturing:
      return "capturing";
    case SweepState::kStored:
      return "stored";
    case SweepState::kFailed:
      return "failed";
    case SweepState::kOffline:
      return "offline";
    case SweepState::kTimedOut:
      return "timed_out";
  }
  return "unknown";
}

bool IsFinalState(SweepState state) { return state != SweepState::kSent && state != SweepState::kCapturing; }

SweepCoordinator::SweepCoordinator(storage::SweepStore& sweeps, storage::QueryStore& devices, AgentRegistry& registry,
                                   Options options)
    : sweep_store_(sweeps),
      device_store_(devices),
      registry_(registry),
      options_([&options] {
        Options o = std::move(options);
        if (!o.now) o.now = NowRfc3339;
        if (o.default_deadline.count() <= 0) o.default_deadline = std::chrono::seconds(60);
        if (o.max_deadline.count() <= 0) o.max_deadline = std::chrono::hours(1);
        if (o.default_deadline > o.max_deadline) o.default_deadline = o.max_deadline;
        o.keep_finished = std::max<size_t>(o.keep_finished, 1);
        return o;
      }()),
      deadlines_(options_.clock != nullptr ? *options_.clock : RealSteadyClock()) {
  std::random_device rd;
  next_serial_ = (static_cast<uint64_t>(rd()) << 8) & 0xffffff;
}

SweepCoordinator::~SweepCoordinator() { Shutdown(); }

SweepCoordinator::Counts SweepCoordinator::CountSweeps() const {
  absl::MutexLock lock(&mu_);
  Counts counts;
  counts.started = started_;
  for (const auto& [id, sweep] : sweeps_) counts.running += sweep->finished ? 0 : 1;
  return counts;
}

std::string SweepCoordinator::NewSweepIdLocked() {
  // Time (readable, sorts) plus a random-seeded serial, so ids stay unique across server restarts.
  std::string base = absl::StrCat("sweep-", CompactUtc(options_.now()), "-");
  for (;;) {
    char suffix[8];
    std::snprintf(suffix, sizeof(suffix), "%06llx", static_cast<unsigned long long>(next_serial_++ & 0xffffff));
    std::string id = base + suffix;
    if (sweeps_.count(id) == 0) return id;
  }
}

absl::StatusOr<std::string> SweepCoordinator::StartSweep(const selector::Selector& selector,
                                                         std::chrono::milliseconds deadline,
                                                         const capture::Labels& labels, bool full_smaps) {
  if (deadline.count() < 0) return absl::InvalidArgumentError("sweep deadline is negative");
  if (deadline.count() == 0) deadline = options_.default_deadline;
  if (deadline > options_.max_deadline) {
    return absl::InvalidArgumentError(absl::StrCat("sweep deadline of ", DeadlineText(deadline),
                                                   " is longer than the limit of ",
                                                   DeadlineText(options_.max_deadline)));
  }
  absl::StatusOr<std::vector<storage::DeviceSummaryRow>> rows = device_store_.ListDevices();
  if (!rows.ok()) {
    return absl::UnavailableError(absl::StrCat("cannot read the device list: ", rows.status().message()));
  }
  std::map<std::string, storage::DeviceRecord> known;
  for (const storage::DeviceSummaryRow& row : *rows) known[row.device.device_id] = row.device;
  absl::StatusOr<SelectedDevices> picked = SelectedDevices::Of(device_store_, selector);
  if (!picked.ok()) return picked.status();
  const auto selected = [&](const storage::DeviceRecord& record) { return picked->Contains(record); };

  auto sweep = std::make_shared<Sweep>();
  sweep->labels = labels;
  std::vector<std::string> to_send;
  std::vector<RemoteAgent> to_relay;
  std::set<std::string> online_ids;
  for (const Target& target : OnlineTargets(known)) {
    online_ids.insert(target.device.device_id);
    if (!selected(target.device)) continue;
    sweep->states[target.device.device_id] = SweepState::kSent;
    if (target.server_id.empty()) {
      to_send.push_back(target.device.device_id);
    } else {
      sweep->asked.insert(target.device.device_id);
      to_relay.push_back({target.device, target.server_id});
    }
  }
  for (const auto& [id, record] : known) {
    if (online_ids.count(id) != 0 || !selected(record)) continue;
    sweep->states[id] = SweepState::kOffline;
  }
  std::map<std::string, std::string> relayed_through;
  for (const RemoteAgent& agent : to_relay) relayed_through[agent.device.device_id] = agent.server_id;
  const size_t window = options_.max_asked_at_once;
  const bool in_turns = window != 0 && to_send.size() > window;
  for (const std::string& id : to_send) {
    sweep->turns.push_back(id);
    sweep->waiting_turn.insert(id);
  }
  for (const auto& [id, state] : sweep->states) {
    auto through = relayed_through.find(id);
    std::string message = state == SweepState::kOffline ? "agent not connected"
                          : through != relayed_through.end()
                              ? absl::StrCat("capture requested through server ", through->second)
                          : in_turns ? absl::StrCat("waiting its turn (", window, " devices asked at once)")
                                     : "capture requested";
    sweep->events.push_back({id, state, std::move(message), ""});
    sweep->record.states[id] = SweepStateName(state);
    if (IsFinalState(state)) ++sweep->done;
  }
  const auto deadline_at = deadlines_.clock().Now() + deadline;
  {
    absl::MutexLock lock(&mu_);
    if (shutting_down_) return absl::UnavailableError("the server is shutting down");
    sweep->id = NewSweepIdLocked();
  }
  sweep->record.sweep_id = sweep->id;
  sweep->record.started_at = options_.now();
  sweep->record.selector = selector.ToString();
  sweep->record.server_id = options_.server_id;
  sweep->in_turns = in_turns;
  sweep->command.mutable_capture_now()->set_sweep_id(sweep->id);
  sweep->command.mutable_capture_now()->set_full_smaps(full_smaps);
  if (absl::Status s = sweep_store_.PutSweep(sweep->record); !s.ok()) {
    return absl::UnavailableError(absl::StrCat("cannot record the sweep: ", s.message()));
  }
  std::unique_ptr<storage::SweepRecord> finished;
  {
    absl::MutexLock lock(&mu_);
    if (shutting_down_) return absl::UnavailableError("the server is shutting down");
    sweeps_[sweep->id] = sweep;
    ++started_;
    if (sweep->done == sweep->states.size()) {
      finished = FinishLocked(*sweep);
    } else {
      sweep->expiry = deadlines_.PostAt(deadline_at, [this, id = sweep->id] { TimeOut(id); });
    }
  }
  LogLine(absl::StrCat(
      "sweep ", sweep->id, " started (", sweep->record.selector.empty() ? "every device" : sweep->record.selector,
      "): ", to_send.size(), " online here, ", to_relay.size(), " on other servers, ",
      sweep->states.size() - to_send.size() - to_relay.size(), " offline, deadline ", DeadlineText(deadline),
      in_turns ? absl::StrCat(", asked ", window, " at a time") : "",
      labels.empty() ? "" : absl::StrCat(", labels ", LabelsText(labels)), full_smaps ? ", full smaps" : ""));
  if (finished != nullptr) Persist(*finished);
  if (!to_relay.empty()) {
    if (absl::Status s = options_.relayer->Relay(sweep->id, to_relay, labels, full_smaps); !s.ok()) {
      for (const RemoteAgent& agent : to_relay) {
        Unask(sweep->id, agent.device.device_id);
        Change(sweep->id, agent.device.device_id, SweepState::kFailed, "",
               absl::StrCat("cannot relay the command to server ", agent.server_id, ": ", s.message()));
      }
    }
  }

  AskInTurn(sweep->id);
  return sweep->id;
}

std::vector<std::string> SweepCoordinator::TakeTurnsLocked(Sweep& sweep) {
  std::vector<std::string> ids;
  const size_t window = options_.max_asked_at_once == 0 ? SIZE_MAX : options_.max_asked_at_once;
  while (!sweep.finished && !sweep.turns.empty() && sweep.open_here.size() < window) {
    std::string id = std::move(sweep.turns.front());
    sweep.turns.pop_front();
    if (sweep.waiting_turn.erase(id) == 0) continue;  // done before its turn (its agent went offline)
    sweep.asked.insert(id);
    sweep.open_here.insert(id);
    ids.push_back(std::move(id));
  }
  return ids;
}

void SweepCoordinator::AskInTurn(const std::string& sweep_id) {
  // A loop, not a recursion through Change: a whole window of agents may be gone at once.
  for (;;) {
    std::vector<std::string> ids;
    std::shared_ptr<Sweep> sweep;
    {
      absl::MutexLock lock(&mu_);
      auto it = sweeps_.find(sweep_id);
      if (it == sweeps_.end()) return;
      sweep = it->second;
      ids = TakeTurnsLocked(*sweep);
      if (ids.empty()) return;
      // Devices told to wait hear when their turn comes; without turns "capture requested" is already said.
      if (sweep->in_turns) {
        for (const std::string& id : ids) sweep->events.push_back({id, SweepState::kSent, "capture requested", ""});
        changed_.SignalAll();
      }
    }
    // Sent outside mu_: the registry calls OnOffline, which takes it, while holding its own lock.
    std::vector<std::unique_ptr<storage::SweepRecord>> finished;
    for (const std::string& id : ids) {
      if (registry_.SendCommand(id, sweep->command)) continue;
      absl::MutexLock lock(&mu_);
      sweep->asked.erase(id);
      auto done = ChangeLocked(*sweep, id, SweepState::kOffline, "", "agent disconnected before the command was sent");
      if (done != nullptr) finished.push_back(std::move(done));
    }
    for (const auto& record : finished) Persist(*record);
  }
}

std::vector<SweepCoordinator::Target> SweepCoordinator::OnlineTargets(
    const std::map<std::string, storage::DeviceRecord>& known) {
  std::vector<Target> targets;
  std::set<std::string> local;
  for (const OnlineAgent& agent : registry_.List()) {
    const std::string& id = agent.info.device_id();
    local.insert(id);
    auto it = known.find(id);
    if (it != known.end()) {
      targets.push_back({it->second, ""});
      continue;
    }
    Target target;
    target.device.device_id = id;
    target.device.model = agent.info.model();
    target.device.soc = agent.info.soc();
    target.device.build_fingerprint = agent.info.build_fingerprint();
    target.device.kernel = agent.info.kernel();
    targets.push_back(std::move(target));
  }
  if (options_.relayer == nullptr) return targets;
  absl::StatusOr<std::vector<RemoteAgent>> remote = options_.relayer->RemoteAgents();
  if (!remote.ok()) {
    // The sweep still reaches this server's agents; the log says why the others' were left out.
    LogLine(absl::StrCat("sweep: cannot read the other servers' agents: ", remote.status().message()));
    return targets;
  }
  for (RemoteAgent& agent : *remote) {
    if (local.count(agent.device.device_id) != 0) continue;
    auto it = known.find(agent.device.device_id);
    targets.push_back({it != known.end() ? it->second : std::move(agent.device), agent.server_id});
  }
  return targets;
}

capture::Labels SweepCoordinator::LabelsFor(const std::string& sweep_id, const std::string& device_id) const {
  {
    absl::MutexLock lock(&mu_);
    auto it = sweeps_.find(sweep_id);
    if (it != sweeps_.end()) return it->second->states.count(device_id) == 0 ? capture::Labels() : it->second->labels;
  }
  return options_.relayer != nullptr ? options_.relayer->RelayedLabels(sweep_id, device_id) : capture::Labels();
}

bool SweepCoordinator::ClaimAnswer(const std::string& sweep_id, const std::string& device_id,
                                   const std::string& capture_id) {
  if (std::optional<bool> local = LocalAnswer(sweep_id, device_id, capture_id, /*claim=*/true)) return *local;
  return options_.relayer != nullptr && options_.relayer->RelayedAnswer(sweep_id, device_id, capture_id, true);
}

bool SweepCoordinator::IsAnswer(const std::string& sweep_id, const std::string& device_id,
                                const std::string& capture_id) {
  if (std::optional<bool> local = LocalAnswer(sweep_id, device_id, capture_id, /*claim=*/false)) return *local;
  return options_.relayer != nullptr && options_.relayer->RelayedAnswer(sweep_id, device_id, capture_id, false);
}

std::optional<bool> SweepCoordinator::LocalAnswer(const std::string& sweep_id, const std::string& device_id,
                                                  const std::string& capture_id, bool claim) {
  if (sweep_id.empty()) return false;
  absl::MutexLock lock(&mu_);
  auto it = sweeps_.find(sweep_id);
  if (it == sweeps_.end()) return std::nullopt;
  Sweep& sweep = *it->second;
  if (sweep.asked.count(device_id) == 0) return false;
  auto answer = sweep.answers.find(device_id);
  if (answer != sweep.answers.end()) return answer->second == capture_id;
  if (claim) sweep.answers.emplace(device_id, capture_id);
  return true;
}

void SweepCoordinator::Unask(const std::string& sweep_id, const std::string& device_id) {
  absl::MutexLock lock(&mu_);
  auto it = sweeps_.find(sweep_id);
  if (it != sweeps_.end()) it->second->asked.erase(device_id);
}

absl::StatusOr<SweepUpdate> SweepCoordinator::WaitForProgress(const std::string& sweep_id, size_t cursor,
                                                              std::chrono::milliseconds max_wait) {
  absl::MutexLock lock(&mu_);
  auto it = sweeps_.find(sweep_id);
  if (it == sweeps_.end()) return absl::NotFoundError(absl::StrCat("no running or recent sweep ", sweep_id));
  std::shared_ptr<Sweep> sweep = it->second;
  const absl::Time deadline = absl::Now() + absl::FromChrono(max_wait);
  while (!sweep->recorded && sweep->events.size() <= cursor) {
    if (changed_.WaitWithDeadline(&mu_, deadline)) break;  // timed out
  }
  return UpdateLocked(*sweep, cursor);
}

SweepUpdate SweepCoordinator::UpdateLocked(const Sweep& sweep, size_t cursor) {
  SweepUpdate u;
  cursor = std::min(cursor, sweep.events.size());
  u.events.assign(sweep.events.begin() + static_cast<std::ptrdiff_t>(cursor), sweep.events.end());
  u.next_cursor = sweep.events.size();
  // A client told "finished" may read the sweep from the store at once.
  u.finished = sweep.recorded;
  u.devices_total = static_cast<uint32_t>(sweep.states.size());
  u.devices_done = sweep.done;
  for (const auto& [id, state] : sweep.states) ++u.state_counts[state];
  return u;
}

void SweepCoordinator::OnCapturing(const std::string& sweep_id, const std::string& device_id,
                                   const std::string& capture_id) {
  ChangeOrRelay(sweep_id, device_id, SweepState::kCapturing, capture_id, "capture arriving");
}

void SweepCoordinator::OnStored(const std::string& sweep_id, const std::string& device_id,
                                const std::string& capture_id) {
  ChangeOrRelay(sweep_id, device_id, SweepState::kStored, capture_id, "capture stored");
}

void SweepCoordinator::OnFailed(const std::string& sweep_id, const std::string& device_id,
                                const std::string& capture_id, const std::string& message) {
  ChangeOrRelay(sweep_id, device_id, SweepState::kFailed, capture_id, message);
}

void SweepCoordinator::OnRemoteState(const std::string& sweep_id, const std::string& device_id, SweepState state,
                                     const std::string& capture_id, const std::string& message) {
  Change(sweep_id, device_id, state, capture_id, message);
}

void SweepCoordinator::OnOffline(const AgentSession& session) {
  std::vector<std::unique_ptr<storage::SweepRecord>> to_persist;
  std::vector<std::string> with_turns_left;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, sweep] : sweeps_) {
      // Not asked yet: it cannot be asked now, and it did not fail anything it was asked.
      const bool waiting = sweep->waiting_turn.count(session.device_id()) != 0;
      auto done = ChangeLocked(
          *sweep, session.device_id(), waiting ? SweepState::kOffline : SweepState::kFailed, "",
          waiting ? "agent disconnected before its turn" : "agent disconnected before its capture was stored");
      if (done != nullptr) to_persist.push_back(std::move(done));
      if (!sweep->turns.empty() && !sweep->finished) with_turns_left.push_back(id);
    }
  }
  for (const auto& record : to_persist) Persist(*record);
  for (const std::string& id : with_turns_left) AskInTurn(id);
}

void SweepCoordinator::ChangeOrRelay(const std::string& sweep_id, const std::string& device_id, SweepState state,
                                     const std::string& capture_id, const std::string& message) {
  if (!Change(sweep_id, device_id, state, capture_id, message) && options_.relayer != nullptr && !sweep_id.empty()) {
    options_.relayer->OnRelayedState(sweep_id, device_id, state, capture_id, message);
  }
}

bool SweepCoordinator::Change(const std::string& sweep_id, const std::string& device_id, SweepState state,
                              const std::string& capture_id, const std::string& message) {
  if (sweep_id.empty()) return false;
  std::unique_ptr<storage::SweepRecord> finished;
  bool turns_left = false;
  {
    absl::MutexLock lock(&mu_);
    auto it = sweeps_.find(sweep_id);
    if (it == sweeps_.end()) return false;
    finished = ChangeLocked(*it->second, device_id, state, capture_id, message);
    turns_left = !it->second->turns.empty() && IsFinalState(state);
  }
  if (finished != nullptr) Persist(*finished);
  if (turns_left) AskInTurn(sweep_id);  // the device done made room for the next
  return true;
}

std::unique_ptr<storage::SweepRecord> SweepCoordinator::ChangeLocked(Sweep& sweep, const std::string& device_id,
                                                                     SweepState state, const std::string& capture_id,
                                                                     const std::string& message) {
  if (sweep.finished) return nullptr;
  auto it = sweep.states.find(device_id);
  if (it == sweep.states.end() || IsFinalState(it->second) || it->second == state) return nullptr;
  it->second = state;
  sweep.record.states[device_id] = SweepStateName(state);
  sweep.events.push_back({device_id, state, message, capture_id});
  if (IsFinalState(state)) {
    ++sweep.done;
    sweep.open_here.erase(device_id);
    sweep.waiting_turn.erase(device_id);
  }
  changed_.SignalAll();
  if (sweep.done == sweep.states.size()) return FinishLocked(sweep);
  return nullptr;
}

std::unique_ptr<storage::SweepRecord> SweepCoordinator::FinishLocked(Sweep& sweep) {
  sweep.finished = true;
  sweep.turns.clear();              // the ids of devices that were done before their turn
  deadlines_.Cancel(sweep.expiry);  // done before its deadline (or it is the deadline's task that runs)
  sweep.record.finished_at = options_.now();
  finished_order_.push_back(sweep.id);
  finished_devices_ += sweep.states.size();
  return std::make_unique<storage::SweepRecord>(sweep.record);
}

void SweepCoordinator::EvictLocked() {
  while (finished_order_.size() > options_.keep_finished ||
         (finished_order_.size() > 1 && finished_devices_ > options_.keep_finished_devices)) {
    auto it = sweeps_.find(finished_order_.front());
    if (it != sweeps_.end() && !it->second->recorded) break;  // its waiters have not seen the end yet
    if (it != sweeps_.end()) {
      finished_devices_ -= std::min(finished_devices_, it->second->states.size());
      sweeps_.erase(it);
    }
    finished_order_.pop_front();
  }
}

void SweepCoordinator::Persist(const storage::SweepRecord& record) {
  if (absl::Status s = sweep_store_.PutSweep(record); !s.ok()) {
    LogLine(absl::StrCat("cannot record the end of sweep ", record.sweep_id, ": ", s.message()));
  }
  if (record.finished_at.empty()) return;
  if (options_.relayer != nullptr) options_.relayer->Unwatch(record.sweep_id);
  std::map<std::string, int> counts;
  for (const auto& [device, state] : record.states) ++counts[state];
  std::string summary;
  for (const auto& [state, n] : counts) absl::StrAppend(&summary, summary.empty() ? "" : ", ", n, " ", state);
  LogLine(absl::StrCat("sweep ", record.sweep_id, " finished: ", summary.empty() ? "no device" : summary));
  absl::MutexLock lock(&mu_);
  auto it = sweeps_.find(record.sweep_id);
  if (it != sweeps_.end()) it->second->recorded = true;
  changed_.SignalAll();
  EvictLocked();
}

void SweepCoordinator::TimeOut(const std::string& sweep_id) {
  std::unique_ptr<storage::SweepRecord> finished;
  {
    absl::MutexLock lock(&mu_);
    auto it = sweeps_.find(sweep_id);
    if (it == sweeps_.end()) return;
    Sweep& sweep = *it->second;
    std::vector<std::string> waiting;
    for (const auto& [device, state] : sweep.states) {
      if (!IsFinalState(state)) waiting.push_back(device);
    }
    for (const std::string& device : waiting) {
      const char* what = sweep.waiting_turn.count(device) != 0       ? "not asked: its turn did not come"
                         : sweep.states[device] == SweepState::kSent ? "no answer"
                                                                     : "capture not stored";
      auto done = ChangeLocked(sweep, device, SweepState::kTimedOut, "", absl::StrCat(what, " within the deadline"));
      if (done != nullptr) finished = std::move(done);
    }
  }
  if (finished != nullptr) Persist(*finished);
}

absl::StatusOr<size_t> SweepCoordinator::CloseInterruptedSweeps(const std::set<std::string>& live_servers) {
  absl::StatusOr<std::vector<storage::SweepRecord>> open = sweep_store_.UnfinishedSweeps();
  if (!open.ok()) return open.status();
  const std::set<std::string> waiting = {SweepStateName(SweepState::kSent), SweepStateName(SweepState::kCapturing)};
  size_t closed = 0;
  for (storage::SweepRecord& record : *open) {
    {
      // A sweep of this process is running, not interrupted (only possible if called after a start).
      absl::MutexLock lock(&mu_);
      if (sweeps_.count(record.sweep_id) != 0) continue;
    }
    // Another live server's sweep: it finishes it (the same id is an earlier process of this server).
    if (record.server_id != options_.server_id && live_servers.count(record.server_id) != 0) continue;
    size_t interrupted = 0;
    for (auto& [device, state] : record.states) {
      if (waiting.count(state) == 0) continue;
      state = kInterruptedStateName;
      ++interrupted;
    }
    record.finished_at = options_.now();
    if (absl::Status s = sweep_store_.PutSweep(record); !s.ok()) return s;
    ++closed;
    LogLine(absl::StrCat("sweep ", record.sweep_id, " was left running by ",
                         record.server_id.empty() || record.server_id == options_.server_id
                             ? std::string("an earlier server process")
                             : absl::StrCat("server ", record.server_id, ", no longer alive"),
                         ": closed, ", interrupted, " of ", record.states.size(), " devices interrupted"));
  }
  return closed;
}

void SweepCoordinator::Shutdown() {
  deadlines_.Stop();  // a deadline's task running finishes first; no other starts
  std::vector<std::unique_ptr<storage::SweepRecord>> to_persist;
  {
    absl::MutexLock lock(&mu_);
    if (!shutting_down_) {
      shutting_down_ = true;
      std::vector<std::shared_ptr<Sweep>> running;
      for (const auto& [id, sweep] : sweeps_) {
        if (!sweep->finished) running.push_back(sweep);
      }
      for (const std::shared_ptr<Sweep>& sweep : running) {
        std::vector<std::string> waiting;
        for (const auto& [device, state] : sweep->states) {
          if (!IsFinalState(state)) waiting.push_back(device);
        }
        for (const std::string& device : waiting) {
          auto done = ChangeLocked(*sweep, device, SweepState::kFailed, "", "server shutting down");
          if (done != nullptr) to_persist.push_back(std::move(done));
        }
      }
    }
  }
  changed_.SignalAll();
  for (const auto& record : to_persist) Persist(*record);
}

}  // namespace memfleet::server
