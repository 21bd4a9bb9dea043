#include "server/fleet/fleet_link.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"

namespace memfleet::server {
namespace {

// A relay delivered here whose sweep never answered is forgotten after the longest sweep deadline.
constexpr std::chrono::hours kForgetDeliveredAfter{1};

std::optional<SweepState> StateOfName(const std::string& name) {
  for (SweepState s : {SweepState::kSent, SweepState::kCapturing, SweepState::kStored, SweepState::kFailed,
                       SweepState::kOffline, SweepState::kTimedOut}) {
    if (name == SweepStateName(s)) return s;
  }
  return std::nullopt;
}

FleetLinkOptions Checked(FleetLinkOptions o) {
  using std::chrono::milliseconds;
  if (o.heartbeat_period.count() <= 0) o.heartbeat_period = std::chrono::seconds(10);
  if (o.relay_poll_period.count() <= 0) o.relay_poll_period = milliseconds(500);
  // A live session must never look stale between two heartbeats.
  o.session_timeout = std::max(o.session_timeout, 2 * o.heartbeat_period);
  return o;
}

}  // namespace

std::string DefaultServerId(const std::string& port) {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') snprintf(host, sizeof(host), "localhost");
  if (port == "0") return absl::StrCat(host, ":0-", getpid());
  return absl::StrCat(host, ":", port);
}

absl::StatusOr<std::map<std::string, std::string>> OnlineDevices(const AgentRegistry& registry, FleetLink* fleet) {
  if (fleet != nullptr) return fleet->OnlineServers();
  std::map<std::string, std::string> online;
  for (const OnlineAgent& agent : registry.List()) online[agent.info.device_id()] = "";
  return online;
}

absl::StatusOr<std::map<std::string, DeviceIncidents>> RefusedIncidents(const AgentRegistry& registry,
                                                                        FleetLink* fleet) {
  if (fleet != nullptr) return fleet->FleetIncidents();
  return registry.AllIncidents();
}

FleetLink::FleetLink(storage::FleetStore& store, AgentRegistry& registry, FleetLinkOptions options)
    : store_(store),
      registry_(registry),
      options_(Checked(std::move(options))),
      runner_(options_.clock != nullptr ? *options_.clock : RealSteadyClock()) {}

FleetLink::~FleetLink() { Stop(); }

void FleetLink::Start(SweepCoordinator& sweeps) {
  {
    absl::MutexLock lock(&mu_);
    if (started_ || stopping_) return;
    started_ = true;
  }
  sweeps_ = &sweeps;
  Heartbeat();
  // Sessions are written with a fresh heartbeat at Hello: the first refresh is due a period from now.
  runner_.RunEvery(
      options_.heartbeat_period, [this] { Heartbeat(); }, runner_.clock().Now() + options_.heartbeat_period);
  runner_.RunEvery(options_.relay_poll_period, [this] { PollRelays(); });
}

void FleetLink::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  runner_.Stop();
}

int64_t FleetLink::WallNowMs() const {
  if (options_.wall_now_ms) return options_.wall_now_ms();
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void FleetLink::PollRelays() {
  const auto now = runner_.clock().Now();
  // The database is written and read with mu_ released: the registry's threads take it at every connect
  // and disconnect.
  DeliverRelays();
  PollWatched();
  absl::MutexLock lock(&mu_);
  for (auto it = delivered_.begin(); it != delivered_.end();) {
    it = now - it->second.at > kForgetDeliveredAfter ? delivered_.erase(it) : std::next(it);
  }
}

void FleetLink::Heartbeat() {
  const int64_t now_ms = WallNowMs();
  if (absl::Status s = store_.PutServerHeartbeat(options_.server_id, now_ms); !s.ok()) {
    LogLine(absl::StrCat("fleet: cannot refresh this server's heartbeat: ", s.message()));
  }
  if (absl::Status s = store_.TouchSessions(options_.server_id, now_ms); !s.ok()) {
    LogLine(absl::StrCat("fleet: cannot refresh this server's session heartbeats: ", s.message()));
  }
  WriteIncidents();
}

void FleetLink::WriteIncidents() {
  std::map<std::string, DeviceIncidents> now = registry_.AllIncidents();
  {
    absl::MutexLock lock(&mu_);
    if (written_incidents_.has_value() && *written_incidents_ == now) return;
  }
  std::vector<storage::IncidentRecord> rows;
  for (const auto& [device_id, incidents] : now) {
    storage::IncidentRecord row;
    row.server_id = options_.server_id;
    row.device_id = device_id;
    row.refused_streams = incidents.refused_streams;
    row.refused_facts = incidents.refused_facts;
    row.future_captures = incidents.future_captures;
    rows.push_back(std::move(row));
  }
  if (absl::Status s = store_.PutIncidents(options_.server_id, rows); !s.ok()) {
    LogLine(absl::StrCat("fleet: cannot record what this server refused: ", s.message(),
                         " (other servers' `devices` will not count it)"));
    return;
  }
  absl::MutexLock lock(&mu_);
  written_incidents_ = std::move(now);
}

absl::StatusOr<std::map<std::string, DeviceIncidents>> FleetLink::FleetIncidents() {
  absl::StatusOr<std::vector<storage::IncidentRecord>> rows =
      store_.LiveIncidents(WallNowMs() - options_.session_timeout.count());
  if (!rows.ok()) return rows.status();
  // This server's own are its registry's, newer than any row it wrote.
  std::map<std::string, DeviceIncidents> fleet = registry_.AllIncidents();
  std::set<std::string> own_facts;
  for (const auto& [device_id, incidents] : fleet) {
    if (!incidents.refused_facts.empty()) own_facts.insert(device_id);
  }
  for (const storage::IncidentRecord& row : *rows) {
    if (row.server_id == options_.server_id) continue;
    DeviceIncidents& sum = fleet[row.device_id];
    sum.refused_streams += row.refused_streams;
    sum.future_captures += row.future_captures;
    if (own_facts.count(row.device_id) == 0 && !row.refused_facts.empty()) sum.refused_facts = row.refused_facts;
  }
  return fleet;
}

void FleetLink::OnOnline(const AgentSession& session) {
  const v1::DeviceInfo& info = session.info();
  storage::SessionRecord record;
  record.device_id = info.device_id();
  record.server_id = options_.server_id;
  record.connected_at = session.connected_at();
  record.heartbeat_ms = WallNowMs();
  record.model = info.model();
  record.soc = info.soc();
  record.build_fingerprint = info.build_fingerprint();
  record.kernel = info.kernel();
  record.agent_version = info.agent_version();
  if (absl::Status s = store_.PutSession(record); !s.ok()) {
    LogLine(absl::StrCat("fleet: cannot record the session of ", record.device_id, ": ", s.message(),
                         " (other servers will not see it online)"));
  }
}

void FleetLink::OnOffline(const AgentSession& session) {
  if (absl::Status s = store_.DeleteSession(session.device_id(), options_.server_id); !s.ok()) {
    LogLine(absl::StrCat("fleet: cannot delete the session of ", session.device_id(), ": ", s.message(),
                         " (it goes stale after the session timeout)"));
  }
  std::vector<RelayKey> waiting;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [key, delivered] : delivered_) {
      if (key.second == session.device_id()) waiting.push_back(key);
    }
  }
  for (const RelayKey& key : waiting) {
    RecordRelayed(key, SweepState::kFailed, "", "agent disconnected before its capture was stored");
  }
}

absl::StatusOr<std::map<std::string, std::string>> FleetLink::OnlineServers() {
  absl::StatusOr<std::vector<storage::SessionRecord>> sessions =
      store_.LiveSessions(WallNowMs() - options_.session_timeout.count());
  if (!sessions.ok()) return sessions.status();
  std::map<std::string, std::string> servers;
  for (const storage::SessionRecord& s : *sessions) servers[s.device_id] = s.server_id;
  // This server's registry is the truth for its own streams, whatever a late row says.
  for (auto it = servers.begin(); it != servers.end();) {
    it = it->second == options_.server_id ? servers.erase(it) : std::next(it);
  }
  for (const OnlineAgent& agent : registry_.List()) servers[agent.info.device_id()] = options_.server_id;
  return servers;
}

absl::StatusOr<std::set<std::string>> FleetLink::LiveServers() {
  absl::StatusOr<std::vector<std::string>> servers = store_.LiveServers(WallNowMs() - options_.session_timeout.count());
  if (!servers.ok()) return servers.status();
  return std::set<std::string>(servers->begin(), servers->end());
}

absl::StatusOr<std::vector<RemoteAgent>> FleetLink::RemoteAgents() {
  absl::StatusOr<std::vector<storage::SessionRecord>> sessions =
      store_.LiveSessions(WallNowMs() - options_.session_timeout.count());
  if (!sessions.ok()) return sessions.status();
  std::vector<RemoteAgent> agents;
  for (const storage::SessionRecord& s : *sessions) {
    if (s.server_id == options_.server_id || registry_.IsOnline(s.device_id)) continue;
    RemoteAgent agent;
    agent.device.device_id = s.device_id;
    agent.device.model = s.model;
    agent.device.soc = s.soc;
    agent.device.build_fingerprint = s.build_fingerprint;
    agent.device.kernel = s.kernel;
    agent.device.agent_version = s.agent_version;
    agent.server_id = s.server_id;
    agents.push_back(std::move(agent));
  }
  return agents;
}

absl::Status FleetLink::Relay(const std::string& sweep_id, const std::vector<RemoteAgent>& agents,
                              const capture::Labels& labels, bool full_smaps) {
  std::vector<storage::SweepRelay> relays;
  for (const RemoteAgent& agent : agents) {
    storage::SweepRelay relay;
    relay.sweep_id = sweep_id;
    relay.device_id = agent.device.device_id;
    relay.server_id = agent.server_id;
    relay.labels = labels;
    relay.full_smaps = full_smaps;
    relays.push_back(std::move(relay));
  }
  if (absl::Status s = store_.PutSweepRelays(relays); !s.ok()) return s;
  {
    absl::MutexLock lock(&mu_);
    watched_.insert(sweep_id);
  }
  return absl::OkStatus();
}

void FleetLink::Unwatch(const std::string& sweep_id) {
  {
    absl::MutexLock lock(&mu_);
    if (watched_.erase(sweep_id) == 0) return;
  }
  // A late write by the delivering server then changes no row: the sweep's outcome is recorded already.
  if (absl::Status s = store_.DeleteSweepRelays(sweep_id); !s.ok()) {
    LogLine(absl::StrCat("sweep ", sweep_id, ": cannot delete its relays: ", s.message()));
  }
}

void FleetLink::DeliverRelays() {
  absl::StatusOr<std::vector<storage::SweepRelay>> relays = store_.TakeSweepRelays(options_.server_id);
  if (!relays.ok()) {
    LogLine(absl::StrCat("fleet: cannot read the sweep commands other servers relayed: ", relays.status().message()));
    return;
  }
  for (const storage::SweepRelay& relay : *relays) {
    {
      absl::MutexLock lock(&mu_);
      delivered_[{relay.sweep_id, relay.device_id}] = {relay.labels, runner_.clock().Now(), ""};
    }
    v1::ServerMessage command;
    command.mutable_capture_now()->set_sweep_id(relay.sweep_id);
    command.mutable_capture_now()->set_full_smaps(relay.full_smaps);
    if (registry_.SendCommand(relay.device_id, command)) {
      LogLine(
          absl::StrCat("sweep ", relay.sweep_id, ": capture requested from ", relay.device_id, " for another server"));
      continue;
    }
    RecordRelayed({relay.sweep_id, relay.device_id}, SweepState::kOffline, "",
                  absl::StrCat("agent no longer connected to server ", options_.server_id));
  }
}

void FleetLink::OnRelayedState(const std::string& sweep_id, const std::string& device_id, SweepState state,
                               const std::string& capture_id, const std::string& message) {
  {
    absl::MutexLock lock(&mu_);
    if (delivered_.count({sweep_id, device_id}) == 0) return;
  }
  RecordRelayed({sweep_id, device_id}, state, capture_id, message);
}

void FleetLink::RecordRelayed(const RelayKey& key, SweepState state, const std::string& capture_id,
                              const std::string& message) {
  if (IsFinalState(state)) {
    absl::MutexLock lock(&mu_);
    delivered_.erase(key);
  }
  if (absl::Status s = store_.SetSweepRelayState(key.first, key.second, SweepStateName(state), capture_id, message);
      !s.ok()) {
    LogLine(absl::StrCat("sweep ", key.first, ": cannot record ", key.second, " ", SweepStateName(state),
                         " for the server that started it: ", s.message()));
  }
}

capture::Labels FleetLink::RelayedLabels(const std::string& sweep_id, const std::string& device_id) {
  absl::MutexLock lock(&mu_);
  auto it = delivered_.find({sweep_id, device_id});
  return it == delivered_.end() ? capture::Labels() : it->second.labels;
}

bool FleetLink::RelayedAnswer(const std::string& sweep_id, const std::string& device_id, const std::string& capture_id,
                              bool claim) {
  absl::MutexLock lock(&mu_);
  auto it = delivered_.find({sweep_id, device_id});
  if (it == delivered_.end()) return false;
  if (!it->second.answer.empty()) return it->second.answer == capture_id;
  if (claim) it->second.answer = capture_id;
  return true;
}

void FleetLink::PollWatched() {
  std::set<std::string> watched;
  {
    absl::MutexLock lock(&mu_);
    watched = watched_;
  }
  for (const std::string& sweep_id : watched) {
    absl::StatusOr<std::vector<storage::SweepRelay>> relays = store_.SweepRelays(sweep_id);
    if (!relays.ok()) {
      LogLine(
          absl::StrCat("sweep ", sweep_id, ": cannot read the other servers' progress: ", relays.status().message()));
      continue;
    }
    for (const storage::SweepRelay& relay : *relays) {
      std::optional<SweepState> state = StateOfName(relay.state);
      if (!state.has_value() || *state == SweepState::kSent) continue;
      sweeps_->OnRemoteState(sweep_id, relay.device_id, *state, relay.capture_id,
                             relay.message.empty() ? absl::StrCat("through server ", relay.server_id) : relay.message);
    }
  }
}

}  // namespace memfleet::server
