#include "server/ingest/hello_watchdog.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace memfleet::server {

HelloWatchdog::HelloWatchdog(HelloWatchdogOptions options)
    : options_(options), runner_(options.clock != nullptr ? *options.clock : RealSteadyClock()) {}

// Before the members the deadline tasks use go.
HelloWatchdog::~HelloWatchdog() { runner_.Stop(); }

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
  if (waiting_.size() >= options_.max_waiting) {
    return absl::ResourceExhaustedError(
        absl::StrCat(options_.max_waiting, " agent streams are already waiting for their Hello; try again later"));
  }
  size_t& from_host = per_host_[host];
  if (from_host >= options_.max_waiting_per_host) {
    return absl::ResourceExhaustedError(
        absl::StrCat(from_host, " agent streams from ", host, " are already waiting for their Hello; try again later"));
  }
  ++from_host;
  const uint64_t serial = next_serial_++;
  std::unique_ptr<Wait> wait(new Wait(this, context, std::move(host), serial));
  waiting_[serial] = {wait.get(), runner_.PostAfter(options_.hello_timeout, [this, serial] { Expire(serial); })};
  return wait;
}

HelloWatchdog::Wait::~Wait() { owner_->Forget(this); }

void HelloWatchdog::Forget(Wait* wait) {
  absl::MutexLock lock(&mu_);
  if (auto it = waiting_.find(wait->serial_); it != waiting_.end()) {
    runner_.Cancel(it->second.expiry);  // the Hello came first (or the stream ended)
    waiting_.erase(it);
  }
  auto host = per_host_.find(wait->host_);
  if (host != per_host_.end() && --host->second == 0) per_host_.erase(host);
}

size_t HelloWatchdog::waiting() const {
  absl::MutexLock lock(&mu_);
  return waiting_.size();
}

void HelloWatchdog::Expire(uint64_t serial) {
  // Cancelled under the lock: the Wait (and the call it watches) cannot end meanwhile, since its
  // destructor takes the lock first. TryCancel makes the stream's blocked Read return false. The entry
  // stays until its Wait is destroyed.
  absl::MutexLock lock(&mu_);
  auto it = waiting_.find(serial);
  if (it != waiting_.end() && !it->second.wait->timed_out_.exchange(true)) it->second.wait->context_->TryCancel();
}

}  // namespace memfleet::server
