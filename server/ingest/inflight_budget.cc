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

InflightBudget::Lease::Lease(Lease&& other) noexcept : budget_(other.budget_), bytes_(other.bytes_) {
  other.budget_ = nullptr;
  other.bytes_ = 0;
}

InflightBudget::Lease& InflightBudget::Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    Release();
    budget_ = std::exchange(other.budget_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void InflightBudget::Lease::Merge(Lease other) {
  if (other.bytes_ == 0) return;
  if (budget_ == nullptr) budget_ = other.budget_;
  bytes_ += std::exchange(other.bytes_, 0);
  other.budget_ = nullptr;
}

void InflightBudget::Lease::Release() {
  InflightBudget* budget = std::exchange(budget_, nullptr);
  const size_t bytes = std::exchange(bytes_, 0);
  if (budget != nullptr && bytes > 0) budget->Give(bytes);
}

InflightBudget::InflightBudget(Options options) : options_(options) {}

bool InflightBudget::FitsLocked(size_t bytes, bool urgent) const {
  if (used_ == 0) return true;  // one capture larger than the budget still goes, alone
  const double share = urgent ? 1.0 : 1.0 - std::clamp(options_.urgent_share, 0.0, 1.0);
  const auto limit = static_cast<size_t>(static_cast<double>(options_.capacity_bytes) * share);
  return used_ + bytes <= limit;
}

void InflightBudget::TakeLocked(size_t bytes) {
  used_ += bytes;
  peak_ = std::max(peak_, used_);
}

InflightBudget::Reservation InflightBudget::Reserve(size_t bytes, bool urgent, Grant grant) {
  Reservation r;
  absl::MutexLock lock(&mu_);
  // Nobody passes those already waiting in front: urgent ones wait only for urgent ones.
  const bool first = urgent ? urgent_.empty() : urgent_.empty() && ordinary_.empty();
  if (first && FitsLocked(bytes, urgent)) {
    TakeLocked(bytes);
    r.lease = Lease(this, bytes);
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
    std::deque<Waiting>* queue = nullptr;
    if (!urgent_.empty()) {
      if (FitsLocked(urgent_.front().bytes, true)) queue = &urgent_;
    } else if (!ordinary_.empty() && FitsLocked(ordinary_.front().bytes, false)) {
      queue = &ordinary_;
    }
    if (queue == nullptr) return granted;
    Waiting w = std::move(queue->front());
    queue->pop_front();
    TakeLocked(w.bytes);
    granted.push_back(Granted{Lease(this, w.bytes), std::move(w.grant)});
  }
}

void InflightBudget::Give(size_t bytes) {
  std::vector<Granted> granted;
  {
    absl::MutexLock lock(&mu_);
    used_ -= std::min(used_, bytes);
    granted = GrantLocked();
  }
  for (Granted& g : granted) g.grant(std::move(g.lease));
}

size_t InflightBudget::used_bytes() const {
  absl::MutexLock lock(&mu_);
  return used_;
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
