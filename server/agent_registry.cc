#include "server/agent_registry.h"

#include <utility>

namespace memfleet::server {

AgentSession::AgentSession(v1::DeviceInfo info, std::string connected_at, std::unique_ptr<MessageSink> sink)
    : info_(std::move(info)), connected_at_(std::move(connected_at)), sink_(std::move(sink)) {}

bool AgentSession::Write(const v1::ServerMessage& message) {
  std::lock_guard<std::mutex> write_lock(write_mu_);
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    if (closed_) return false;
  }
  return sink_->Write(message);
}

void AgentSession::Cancel() {
  // state_mu_ is held across Cancel so Close cannot complete (and the handler's ServerContext die)
  // while the cancel is in progress; Cancel itself never blocks on the stream.
  std::lock_guard<std::mutex> lock(state_mu_);
  if (closed_ || cancelled_) return;
  cancelled_ = true;
  sink_->Cancel();
}

void AgentSession::Close() {
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    closed_ = true;
  }
  // Wait for a write that began before closed_ was set.
  std::lock_guard<std::mutex> write_lock(write_mu_);
}

bool AgentSession::cancelled() const {
  std::lock_guard<std::mutex> lock(state_mu_);
  return cancelled_;
}

std::shared_ptr<AgentSession> AgentRegistry::Register(std::shared_ptr<AgentSession> session) {
  std::shared_ptr<AgentSession> old;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::shared_ptr<AgentSession>& slot = sessions_[session->device_id()];
    old = std::move(slot);
    slot = std::move(session);
  }
  if (old != nullptr) old->Cancel();
  return old;
}

void AgentRegistry::Unregister(const std::shared_ptr<AgentSession>& session) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(session->device_id());
  if (it != sessions_.end() && it->second == session) sessions_.erase(it);
}

std::shared_ptr<AgentSession> AgentRegistry::Find(const std::string& device_id) const {
  std::lock_guard<std::mutex> lock(mu_);
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
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<OnlineAgent> out;
  out.reserve(sessions_.size());
  for (const auto& [id, session] : sessions_) out.push_back({session->info(), session->connected_at()});
  return out;
}

size_t AgentRegistry::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sessions_.size();
}

void AgentRegistry::CancelAll() {
  std::vector<std::shared_ptr<AgentSession>> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, session] : sessions_) all.push_back(session);
  }
  for (const auto& session : all) session->Cancel();
}

}  // namespace memfleet::server
