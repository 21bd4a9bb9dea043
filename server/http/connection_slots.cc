#include "server/http/connection_slots.h"

#include <utility>

namespace memfleet::server {

ConnectionSlots::Slot::~Slot() {
  if (owner_ != nullptr) owner_->Give(peer_);
}

std::optional<ConnectionSlots::Slot> ConnectionSlots::TryTake(const std::string& peer) {
  absl::MutexLock lock(&mu_);
  if (taken_ >= max_total_) return std::nullopt;
  auto it = by_peer_.find(peer);
  if (it != by_peer_.end() && it->second >= max_per_peer_) return std::nullopt;
  ++taken_;
  if (it == by_peer_.end()) {
    by_peer_.emplace(peer, 1);
  } else {
    ++it->second;
  }
  return Slot(this, peer);
}

size_t ConnectionSlots::taken() const {
  absl::MutexLock lock(&mu_);
  return taken_;
}

size_t ConnectionSlots::taken_by(const std::string& peer) const {
  absl::MutexLock lock(&mu_);
  auto it = by_peer_.find(peer);
  return it == by_peer_.end() ? 0 : it->second;
}

void ConnectionSlots::Give(const std::string& peer) {
  absl::MutexLock lock(&mu_);
  --taken_;
  auto it = by_peer_.find(peer);
  if (it != by_peer_.end() && --it->second == 0) by_peer_.erase(it);
}

}  // namespace memfleet::server
