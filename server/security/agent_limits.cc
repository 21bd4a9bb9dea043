#include "server/security/agent_limits.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace memfleet::security {

AgentLimits::StreamLease::~StreamLease() { owner_->Release(key_); }

AgentLimits::AgentLimits(AgentLimitsOptions options, Clock clock)
    : options_(options), clock_(clock ? std::move(clock) : Clock([] { return std::chrono::steady_clock::now(); })) {}

absl::StatusOr<std::unique_ptr<AgentLimits::StreamLease>> AgentLimits::OpenStream(const std::string& key,
                                                                                  const std::string& who) {
  absl::MutexLock lock(&mu_);
  uint32_t& open = streams_[key];
  if (options_.max_streams_per_key != 0 && open >= options_.max_streams_per_key) {
    if (open == 0) streams_.erase(key);
    return absl::ResourceExhaustedError(absl::StrCat(who, " already has ", options_.max_streams_per_key,
                                                     " open agent streams (the server's --max-streams-per-token); "
                                                     "this one is refused"));
  }
  ++open;
  return std::make_unique<StreamLease>(this, key);
}

void AgentLimits::Release(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = streams_.find(key);
  if (it == streams_.end()) return;
  if (--it->second == 0) streams_.erase(it);
}

size_t AgentLimits::open_streams(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = streams_.find(key);
  return it == streams_.end() ? 0 : it->second;
}

absl::Status AgentLimits::CountCapture(const std::string& device_id) {
  if (options_.max_captures_per_minute == 0) return absl::OkStatus();
  const auto now = clock_();
  absl::MutexLock lock(&mu_);
  std::deque<std::chrono::steady_clock::time_point>& times = captures_[device_id];
  while (!times.empty() && now - times.front() >= std::chrono::minutes(1)) times.pop_front();
  if (times.size() >= options_.max_captures_per_minute) {
    return absl::ResourceExhaustedError(
        absl::StrCat("device ", device_id, " sent more than ", options_.max_captures_per_minute,
                     " captures within a minute (the server's --max-captures-per-minute); its stream is cut off"));
  }
  times.push_back(now);
  // Bounded memory: a device's window holds at most max_captures_per_minute times. Devices that went
  // quiet are swept lazily here, a few at a time.
  for (auto it = captures_.begin(); it != captures_.end() && captures_.size() > 4096;) {
    if (it->second.empty() || now - it->second.back() >= std::chrono::minutes(1)) {
      it = captures_.erase(it);
    } else {
      ++it;
    }
  }
  return absl::OkStatus();
}

}  // namespace memfleet::security
