#include "server/fleet/agent_registry.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/core/validation.h"

namespace memfleet::server {

AgentSession::AgentSession(v1::DeviceInfo info, std::string connected_at, std::unique_ptr<MessageSink> sink)
    : info_(std::move(info)), connected_at_(std::move(connected_at)), sink_(std::move(sink)) {}

bool AgentSession::Write(const v1::ServerMessage& message) {
  absl::MutexLock write_lock(&write_mu_);
  {
    absl::MutexLock lock(&state_mu_);
    if (closed_) return false;
  }
  return sink_->Write(message);
}

void AgentSession::Cancel() {
  // state_mu_ is held across Cancel so Close cannot complete (and the handler's ServerContext die)
  // while the cancel is in progress; Cancel itself never blocks on the stream.
  absl::MutexLock lock(&state_mu_);
  if (closed_ || cancelled_) return;
  cancelled_ = true;
  sink_->Cancel();
}

void AgentSession::Close() {
  {
    absl::MutexLock lock(&state_mu_);
    closed_ = true;
  }
  // Wait for a write that began before closed_ was set.
  absl::MutexLock write_lock(&write_mu_);
}

bool AgentSession::cancelled() const {
  absl::MutexLock lock(&state_mu_);
  return cancelled_;
}

bool SameDevice(const v1::DeviceInfo& a, const v1::DeviceInfo& b) {
  return a.model() == b.model() && a.soc() == b.soc() && a.build_fingerprint() == b.build_fingerprint() &&
         a.kernel() == b.kernel() && a.page_size() == b.page_size();
}

std::string FactsText(const v1::DeviceInfo& info) {
  return absl::StrCat("model \"", Snippet(info.model()), "\", soc \"", Snippet(info.soc()), "\", build \"",
                      Snippet(info.build_fingerprint()), "\", kernel \"", Snippet(info.kernel()), "\", page size ",
                      info.page_size());
}

absl::StatusOr<std::shared_ptr<AgentSession>> AgentRegistry::Register(std::shared_ptr<AgentSession> session) {
  std::shared_ptr<AgentSession> old;
  {
    absl::MutexLock lock(&mu_);
    std::shared_ptr<AgentSession>& slot = sessions_[session->device_id()];
    if (slot != nullptr && !SameDevice(slot->info(), session->info())) {
      DeviceIncidents& incidents = incidents_[session->device_id()];
      ++incidents.refused_streams;
      incidents.refused_facts = FactsText(session->info());
      return absl::AlreadyExistsError(absl::StrCat(
          "device id \"", session->device_id(), "\" already has a live stream from another device (",
          FactsText(slot->info()), ", connected ", slot->connected_at(), "); this Hello describes ",
          incidents.refused_facts, ". Two agents share the device id: give each device its own --device-id"));
    }
    old = std::move(slot);
    slot = session;
  }
  if (old != nullptr) old->Cancel();
  for (RegistryListener* listener : Listeners()) listener->OnOnline(*session);
  return old;
}

void AgentRegistry::AddListener(RegistryListener* listener) {
  absl::MutexLock lock(&mu_);
  listeners_.push_back(listener);
}

std::vector<RegistryListener*> AgentRegistry::Listeners() const {
  absl::MutexLock lock(&mu_);
  return listeners_;
}

void AgentRegistry::CountFutureCapture(const std::string& device_id) {
  absl::MutexLock lock(&mu_);
  ++incidents_[device_id].future_captures;
}

DeviceIncidents AgentRegistry::Incidents(const std::string& device_id) const {
  absl::MutexLock lock(&mu_);
  auto it = incidents_.find(device_id);
  return it == incidents_.end() ? DeviceIncidents() : it->second;
}

std::map<std::string, DeviceIncidents> AgentRegistry::AllIncidents() const {
  absl::MutexLock lock(&mu_);
  return incidents_;
}

void AgentRegistry::Unregister(const std::shared_ptr<AgentSession>& session) {
  {
    absl::MutexLock lock(&mu_);
    auto it = sessions_.find(session->device_id());
    if (it == sessions_.end() || it->second != session) return;
    sessions_.erase(it);
  }
  for (RegistryListener* listener : Listeners()) listener->OnOffline(*session);
}

std::shared_ptr<AgentSession> AgentRegistry::Find(const std::string& device_id) const {
  absl::MutexLock lock(&mu_);
  auto it = sessions_.find(device_id);
  return it == sessions_.end() ? nullptr : it->second;
}

bool AgentRegistry::SendCommand(const std::string& device_id, const v1::ServerMessage& message) {
  // The write happens outside mu_: a slow stream must not stall the registry.
  std::shared_ptr<AgentSession> session = Find(device_id);
  return session != nullptr && session->Write(message);
}

bool AgentRegistry::IsOnline(const std::string& device_id) const { return Find(device_id) != nullptr; }

std::optional<OnlineAgent> AgentRegistry::Get(const std::string& device_id) const {
  std::shared_ptr<AgentSession> session = Find(device_id);
  if (session == nullptr) return std::nullopt;
  return OnlineAgent{session->info(), session->connected_at()};
}

std::vector<OnlineAgent> AgentRegistry::List() const {
  absl::MutexLock lock(&mu_);
  std::vector<OnlineAgent> out;
  out.reserve(sessions_.size());
  for (const auto& [id, session] : sessions_) out.push_back({session->info(), session->connected_at()});
  return out;
}

size_t AgentRegistry::size() const {
  absl::MutexLock lock(&mu_);
  return sessions_.size();
}

void AgentRegistry::CancelAll() {
  std::vector<std::shared_ptr<AgentSession>> all;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, session] : sessions_) all.push_back(session);
  }
  for (const auto& session : all) session->Cancel();
}

}  // namespace memfleet::server
