// InflightBudget: the memory all agent streams' captures may hold on the server at once — being assembled,
// accounted, encoded or waiting for their commit — shared by every stream (`--max-inflight-mb`). A stream
// whose next capture does not fit is not read until room frees: gRPC's flow control then holds the agent
// at its socket, and the agent keeps the capture in its spool. Nothing is refused for want of room.
//
//   InflightBudget budget(InflightBudget::Options{64 << 20});
//   InflightBudget::Reservation r = budget.Reserve(bytes, /*urgent=*/false, [](InflightBudget::Lease lease) {
//     ... room came later: read on, holding `lease` until the capture is answered ...
//   });
//   if (r.lease.has_value()) ... room now ...
//
// Who waits gets room in order: urgent reservations (sweeps' captures) before ordinary ones, each kind first
// come, first served, so a large capture is never passed over for ever by small ones. Ordinary
// reservations may hold only `ordinary_share` of the budget: when a sweep starts, its captures find room at
// once instead of waiting for the periodic ones already admitted. Urgent ones may hold `urgent_share`, and
// while they wait ordinary ones get room only up to the rest (at least one capture): a sweep over
// thousands of devices takes most of the room, but the periodic captures that arrive meanwhile are not
// held for the whole sweep (an urgent one larger than its share goes once no other urgent one holds room).
// One reservation larger than the budget is granted when nothing else is held, so it waits but does not
// wait for ever.
//
// Thread-safe. Grants are called without the budget's lock, on the thread that freed the room (a Lease's
// release); they must not wait.
#ifndef MEMFLEET_SERVER_INGEST_INFLIGHT_BUDGET_H_
#define MEMFLEET_SERVER_INGEST_INFLIGHT_BUDGET_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace memfleet::server {

class InflightBudget {
 public:
  struct Options {
    size_t capacity_bytes = size_t{64} << 20;
    double ordinary_share = 0.75;  // of the capacity, at most, for ordinary reservations
    double urgent_share = 0.875;   // ... for urgent ones; ordinary ones keep the rest while urgent ones wait
  };

  // Bytes held; given back when released or destroyed. Move-only.
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&& other) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { Release(); }

    size_t bytes() const { return urgent_bytes_ + ordinary_bytes_; }
    // Takes over `other`'s bytes (of the same budget, or `other` holds none).
    void Merge(Lease other);
    // Gives back all but `keep_bytes` (a capture that shrank: accounted, its nodes freed).
    void ShrinkTo(size_t keep_bytes);
    // Gives the bytes back (waiters that now fit are granted, on this thread). Idempotent.
    void Release();

   private:
    friend class InflightBudget;
    Lease(InflightBudget* budget, size_t bytes, bool urgent)
        : budget_(budget), urgent_bytes_(urgent ? bytes : 0), ordinary_bytes_(urgent ? 0 : bytes) {}
    InflightBudget* budget_ = nullptr;
    size_t urgent_bytes_ = 0;  // each given back to its kind's count
    size_t ordinary_bytes_ = 0;
  };

  using Waiter = uint64_t;  // 0: none
  using Grant = std::function<void(Lease)>;
  struct Reservation {
    std::optional<Lease> lease;  // granted now (`grant` will not be called)
    Waiter waiter = 0;           // else: `grant` is called once room frees, unless Cancel(waiter) wins
  };

  explicit InflightBudget(Options options);
  InflightBudget(const InflightBudget&) = delete;
  InflightBudget& operator=(const InflightBudget&) = delete;

  Reservation Reserve(size_t bytes, bool urgent, Grant grant) ABSL_LOCKS_EXCLUDED(mu_);
  // True when `waiter` was still waiting: it is forgotten and its grant never called. False when it was
  // granted already (its grant runs or ran).
  bool Cancel(Waiter waiter) ABSL_LOCKS_EXCLUDED(mu_);
  // Moves a waiting ordinary reservation among the urgent ones (at their end): its stream was asked for a
  // sweep's capture, which it can send only after this one.
  void Promote(Waiter waiter) ABSL_LOCKS_EXCLUDED(mu_);

  size_t capacity_bytes() const { return options_.capacity_bytes; }
  size_t used_bytes() const ABSL_LOCKS_EXCLUDED(mu_);
  size_t peak_used_bytes() const ABSL_LOCKS_EXCLUDED(mu_);
  size_t waiting() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Waiting {
    Waiter id;
    size_t bytes;
    Grant grant;
  };
  struct Granted {
    Lease lease;
    Grant grant;
  };
  bool FitsLocked(size_t bytes, bool urgent) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  size_t LimitLocked(double share) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void TakeLocked(size_t bytes, bool urgent) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Grants the waiters at the heads of the queues while they fit; the caller runs the grants unlocked.
  std::vector<Granted> GrantLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Give(size_t urgent_bytes, size_t ordinary_bytes) ABSL_LOCKS_EXCLUDED(mu_);

  const Options options_;
  mutable absl::Mutex mu_;
  size_t used_urgent_ ABSL_GUARDED_BY(mu_) = 0;
  size_t used_ordinary_ ABSL_GUARDED_BY(mu_) = 0;
  size_t peak_ ABSL_GUARDED_BY(mu_) = 0;
  Waiter next_waiter_ ABSL_GUARDED_BY(mu_) = 1;
  std::deque<Waiting> urgent_ ABSL_GUARDED_BY(mu_);
  std::deque<Waiting> ordinary_ ABSL_GUARDED_BY(mu_);
};

// What a capture is charged at its Begin: its nodes as the assembler holds them (the announced content
// plus a typical path per node) twice over — the capture, then its report, JSON and stored form beside it
// while it is accounted and encoded — plus one chunk message being read (the agent's chunks are 256 KiB).
size_t InflightBytesOfCapture(uint64_t content_bytes, uint64_t node_count);
// The same for a capture whose assembler already holds `held_bytes` (paths longer than the typical).
size_t InflightBytesOfHeld(uint64_t held_bytes);

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_INGEST_INFLIGHT_BUDGET_H_
