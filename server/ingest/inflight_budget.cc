#include "server/ingest/inflight_budget.h"

#include <algorithm>
#include <utility>

namespace memfleet::server {
namespace {

// A node's path and its place in the capture beside its content: the sample devices' paths average ~60
// bytes, a Node and its map entry ~100 more.
constexpr uint64_t kNodeOverheadBytes = 160;
// One chunk message read while the capture is assembled (the agent's chunk size).
constexpr uint64_t kChunkMessageBytes = 256 * 1024;

size_t Clamp(uint64_t bytes) { return static_cast<size_t>(std::min<uint64_t>(bytes, SIZE_MAX / 4)); }

}  // namespace

size_t InflightBytesOfHeld(uint64_t held_bytes) { return Clamp(2 * Clamp(held_bytes) + kChunkMessageBytes); }

size_t InflightBytesOfCapture(uint64_t content_bytes, uint64_t node_count) {
  return InflightBytesOfHeld(Clamp(content_bytes) + Clamp(node_count) * kNodeOverheadBytes);
}

InflightBudget::Lease::Lease(Lease&& other) noexcept
    : budget_(std::exchange(other.budget_, nullptr)),
      urgent_bytes_(std::exchange(other.urgent_bytes_, 0)),
      ordinary_bytes_(std::exchange(other.ordinary_bytes_, 0)) {}

InflightBudget::Lease& InflightBudget::Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    Release();
    budget_ = std::exchange(other.budget_, nullptr);
    urgent_bytes_ = std::exchange(other.urgent_bytes_, 0);
    ordinary_bytes_ = std::exchange(other.ordinary_bytes_, 0);
  }
  return *this;
}

void InflightBudget::Lease::Merge(Lease other) {
  if (other.bytes() == 0) return;
  if (budget_ == nullptr) budget_ = other.budget_;
  urgent_bytes_ += std::exchange(other.urgent_bytes_, 0);
  ordinary_bytes_ += std::exchange(other.ordinary_bytes_, 0);
  other.budget_ = nullptr;
}

void InflightBudget::Lease::ShrinkTo(size_t keep_bytes) {
  if (budget_ == nullptr || keep_bytes >= bytes()) return;
  const size_t keep_urgent = std::min(urgent_bytes_, keep_bytes);
  const size_t keep_ordinary = std::min(ordinary_bytes_, keep_bytes - keep_urgent);
  const size_t give_urgent = urgent_bytes_ - keep_urgent, give_ordinary = ordinary_bytes_ - keep_ordinary;
  urgent_bytes_ = keep_urgent;
  ordinary_bytes_ = keep_ordinary;
  budget_->Give(give_urgent, give_ordinary);
}

void InflightBudget::Lease::Release() {
  InflightBudget* budget = std::exchange(budget_, nullptr);
  const size_t urgent = std::exchange(urgent_bytes_, 0), ordinary = std::exchange(ordinary_bytes_, 0);
  if (budget != nullptr && urgent + ordinary > 0) budget->Give(urgent, ordinary);
}

InflightBudget::InflightBudget(Options options) : options_(options) {}

size_t InflightBudget::LimitLocked(double share) const {
  return static_cast<size_t>(static_cast<double>(options_.capacity_bytes) * std::clamp(share, 0.0, 1.0));
}

bool InflightBudget::FitsLocked(size_t bytes, bool urgent) const {
  const size_t used = used_urgent_ + used_ordinary_;
  if (used == 0) return true;  // one capture larger than the budget still goes, alone
  if (used + bytes > options_.capacity_bytes) return false;
  // An urgent one larger than its share still goes when no other urgent one holds room: else the periodic
  // captures, which always get one at a time, could keep it waiting for ever.
  if (urgent) return used_urgent_ == 0 || used_urgent_ + bytes <= LimitLocked(options_.urgent_share);
  if (used_ordinary_ + bytes > LimitLocked(options_.ordinary_share)) return false;
  // While sweeps' captures wait, periodic ones keep what sweeps may not take — one capture at least.
  return urgent_.empty() || used_ordinary_ == 0 ||
         used_ordinary_ + bytes <= options_.capacity_bytes - LimitLocked(options_.urgent_share);
}

void InflightBudget::TakeLocked(size_t bytes, bool urgent) {
  (urgent ? used_urgent_ : used_ordinary_) += bytes;
  peak_ = std::max(peak_, used_urgent_ + used_ordinary_);
}

InflightBudget::Reservation InflightBudget::Reserve(size_t bytes, bool urgent, Grant grant) {
  Reservation r;
  absl::MutexLock lock(&mu_);
  // Nobody passes those already waiting in front: urgent ones wait only for urgent ones.
  const bool first = urgent ? urgent_.empty() : ordinary_.empty();
  if (first && FitsLocked(bytes, urgent)) {
    TakeLocked(bytes, urgent);
    r.lease = Lease(this, bytes, urgent);
    return r;
  }
  r.waiter = next_waiter_++;
  (urgent ? urgent_ : ordinary_).push_back(Waiting{r.waiter, bytes, std::move(grant)});
  return r;
}

bool InflightBudget::Cancel(Waiter waiter) {
  std::vector<Granted> granted;
  {
    absl::MutexLock lock(&mu_);
    bool found = false;
    for (std::deque<Waiting>* queue : {&urgent_, &ordinary_}) {
      auto it = std::find_if(queue->begin(), queue->end(), [waiter](const Waiting& w) { return w.id == waiter; });
      if (it == queue->end()) continue;
      queue->erase(it);
      found = true;
      break;
    }
    if (!found) return false;
    granted = GrantLocked();  // the cancelled one may have held up those behind it
  }
  for (Granted& g : granted) g.grant(std::move(g.lease));
  return true;
}

void InflightBudget::Promote(Waiter waiter) {
  std::vector<Granted> granted;
  {
    absl::MutexLock lock(&mu_);
    auto it = std::find_if(ordinary_.begin(), ordinary_.end(), [waiter](const Waiting& w) { return w.id == waiter; });
    if (it == ordinary_.end()) return;
    urgent_.push_back(std::move(*it));
    ordinary_.erase(it);
    granted = GrantLocked();  // the urgent share may have room for it now
  }
  for (Granted& g : granted) g.grant(std::move(g.lease));
}

std::vector<InflightBudget::Granted> InflightBudget::GrantLocked() {
  std::vector<Granted> granted;
  for (;;) {
    bool urgent = true;
    if (urgent_.empty() || !FitsLocked(urgent_.front().bytes, true)) {
      if (ordinary_.empty() || !FitsLocked(ordinary_.front().bytes, false)) return granted;
      urgent = false;
    }
    std::deque<Waiting>& queue = urgent ? urgent_ : ordinary_;
    Waiting w = std::move(queue.front());
    queue.pop_front();
    TakeLocked(w.bytes, urgent);
    granted.push_back(Granted{Lease(this, w.bytes, urgent), std::move(w.grant)});
  }
}

void InflightBudget::Give(size_t urgent_bytes, size_t ordinary_bytes) {
  std::vector<Granted> granted;
  {
    absl::MutexLock lock(&mu_);
    used_urgent_ -= std::min(used_urgent_, urgent_bytes);
    used_ordinary_ -= std::min(used_ordinary_, ordinary_bytes);
    granted = GrantLocked();
  }
  for (Granted& g : granted) g.grant(std::move(g.lease));
}

size_t InflightBudget::used_bytes() const {
  absl::MutexLock lock(&mu_);
  return used_urgent_ + used_ordinary_;
}

size_t InflightBudget::peak_used_bytes() const {
  absl::MutexLock lock(&mu_);
  return peak_;
}

size_t InflightBudget::waiting() const {
  absl::MutexLock lock(&mu_);
  return urgent_.size() + ordinary_.size();
}

}  // namespace memfleet::server
