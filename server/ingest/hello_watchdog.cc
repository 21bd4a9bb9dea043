#include "server/ingest/hello_watchdog.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace memfleet::server {

HelloWatchdog::HelloWatchdog(HelloWatchdogOptions options)
    : options_(options), clock_(options.clock != nullptr ? *options.clock : RealSteadyClock()) {
  clock_.AddSleeper(&mu_, &cv_);
  thread_ = std::thread([this] { Run(); });
}

HelloWatchdog::~HelloWatchdog() {
  clock_.RemoveSleeper(&cv_);
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  cv_.SignalAll();
  thread_.join();
}

std::string HelloWatchdog::PeerHost(const std::string& peer) {
  const size_t colon = peer.rfind(':');
  const size_t first = peer.find(':');
  // "unix:/path" and the like have no port to drop.
  if (colon == std::string::npos || colon == first) return peer;
  return peer.substr(0, colon);
}

absl::StatusOr<std::unique_ptr<HelloWatchdog::Wait>> HelloWatchdog::Watch(grpc::ServerContextBase* context) {
  std::string host = PeerHost(context->peer());
  absl::MutexLock lock(&mu_);
  const auto deadline = clock_.Now() + options_.hello_timeout;
  if (by_deadline_.size() >= options_.max_waiting) {
    return absl::ResourceExhaustedError(absl::StrCat(options_.max_waiting,
                                                     " agent streams are already waiting for their Hello; try again later"));
  }
  size_t& from_host = per_host_[host];
  if (from_host >= options_.max_waiting_per_host) {
    return absl::ResourceExhaustedError(absl::StrCat(from_host, " agent streams from ", host,
                                                     " are already waiting for their Hello; try again later"));
  }
  ++from_host;
  std::unique_ptr<Wait> wait(new Wait(this, context, std::move(host), deadline));
  by_deadline_.emplace(deadline, wait.get());
  cv_.SignalAll();  // the watchdog may be asleep until a later deadline, or for good
  return wait;
}

HelloWatchdog::Wait::~Wait() { owner_->Forget(this); }

void HelloWatchdog::Forget(Wait* wait) {
  absl::MutexLock lock(&mu_);
  auto [first, last] = by_deadline_.equal_range(wait->deadline_);
  for (auto it = first; it != last; ++it) {
    if (it->second == wait) {
      by_deadline_.erase(it);
      break;
    }
  }
  auto host = per_host_.find(wait->host_);
  if (host != per_host_.end() && --host->second == 0) per_host_.erase(host);
}

size_t HelloWatchdog::waiting() const {
  absl::MutexLock lock(&mu_);
  return by_deadline_.size();
}

void HelloWatchdog::Run() {
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    const auto now = clock_.Now();
    // Cancelled under the lock: a Wait (and the call it watches) cannot end meanwhile, since its
    // destructor takes the lock first. TryCancel makes the stream's blocked Read return false. An
    // expired entry stays until its Wait is destroyed, marked so that it is cancelled once.
    auto it = by_deadline_.begin();
    for (; it != by_deadline_.end() && it->first <= now; ++it) {
      if (!it->second->timed_out_.exchange(true)) it->second->context_->TryCancel();
    }
    if (it == by_deadline_.end()) {
      cv_.Wait(&mu_);  // until a new stream is watched, or the end
    } else {
      // A copy: the entry may be erased while the lock is released (its stream said Hello).
      const std::chrono::steady_clock::time_point next = it->first;
      cv_.WaitWithTimeout(&mu_, absl::FromChrono(next - now));
    }
  }
}

}  // namespace memfleet::server
