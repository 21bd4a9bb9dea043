// InflightBudget: who gets room, in which order, and that the bytes held never exceed the budget — also
// with threads reserving and releasing at once (this suite runs under ThreadSanitizer in CI).
#include "server/ingest/inflight_budget.h"

#include <atomic>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"

namespace memfleet::server {
namespace {

using Lease = InflightBudget::Lease;

// Grants land here, in the order they were called.
struct Granted {
  absl::Mutex mu;
  std::vector<std::pair<int, Lease>> leases ABSL_GUARDED_BY(mu);

  InflightBudget::Grant For(int tag) {
    return [this, tag](Lease lease) {
      absl::MutexLock lock(&mu);
      leases.emplace_back(tag, std::move(lease));
    };
  }
  std::vector<int> Tags() {
    absl::MutexLock lock(&mu);
    std::vector<int> tags;
    for (const auto& [tag, lease] : leases) tags.push_back(tag);
    return tags;
  }
  // Releases the lease granted to `tag` (the grants it triggers land here too).
  void Release(int tag) {
    Lease lease;
    {
      absl::MutexLock lock(&mu);
      for (auto& [t, l] : leases) {
        if (t == tag) lease = std::move(l);
      }
    }
    lease.Release();  // outside the lock: it calls grants, which take it
  }
};

// The server's shares: ordinary reservations up to 3/4, urgent ones up to 7/8.
InflightBudget::Options Capacity(size_t bytes) { return InflightBudget::Options{bytes}; }

TEST(InflightBudgetTest, ALeaseHoldsItsBytesUntilReleasedOrDestroyed) {
  InflightBudget budget(Capacity(1000));
  {
    InflightBudget::Reservation a = budget.Reserve(300, false, nullptr);
    ASSERT_TRUE(a.lease.has_value());
    EXPECT_EQ(a.waiter, 0u);
    EXPECT_EQ(a.lease->bytes(), 300u);
    InflightBudget::Reservation b = budget.Reserve(200, false, nullptr);
    ASSERT_TRUE(b.lease.has_value());
    EXPECT_EQ(budget.used_bytes(), 500u);
    b.lease->Release();
    b.lease->Release();  // idempotent
    EXPECT_EQ(budget.used_bytes(), 300u);
    Lease moved = std::move(*a.lease);
    EXPECT_EQ(budget.used_bytes(), 300u);  // moving a lease does not give it back
    EXPECT_EQ(moved.bytes(), 300u);
  }
  EXPECT_EQ(budget.used_bytes(), 0u);
  EXPECT_EQ(budget.peak_used_bytes(), 500u);
}

TEST(InflightBudgetTest, OrdinaryReservationsFillThreeQuartersAndThenWaitFirstComeFirstServed) {
  InflightBudget budget(Capacity(1000));  // ordinary ones may hold 750
  Granted granted;
  std::optional<Lease> first = budget.Reserve(500, false, granted.For(0)).lease;
  ASSERT_TRUE(first.has_value());
  // 500 + 300 = 800 > 750: waits, though the budget has 500 left.
  InflightBudget::Reservation second = budget.Reserve(300, false, granted.For(1));
  EXPECT_FALSE(second.lease.has_value());
  EXPECT_NE(second.waiter, 0u);
  // 100 would fit, but it does not pass the one waiting in front of it.
  InflightBudget::Reservation third = budget.Reserve(100, false, granted.For(2));
  EXPECT_FALSE(third.lease.has_value());
  EXPECT_EQ(budget.waiting(), 2u);
  EXPECT_TRUE(granted.Tags().empty());

  first->Release();  // 0 + 300 + 100 fit: both, in their order
  EXPECT_EQ(granted.Tags(), (std::vector<int>{1, 2}));
  EXPECT_EQ(budget.used_bytes(), 400u);
  EXPECT_EQ(budget.waiting(), 0u);
}

TEST(InflightBudgetTest, UrgentReservationsFindRoomBeyondTheOrdinaryShareAndGoBeforeOrdinaryOnes) {
  InflightBudget budget(Capacity(1000));
  Granted granted;
  std::optional<Lease> periodic = budget.Reserve(700, false, nullptr).lease;
  ASSERT_TRUE(periodic.has_value());
  EXPECT_FALSE(budget.Reserve(100, false, granted.For(1)).lease.has_value());  // 800 > 750
  // A sweep's capture passes the waiting periodic one and finds room beyond the ordinary share at once.
  std::optional<Lease> sweep = budget.Reserve(250, true, granted.For(2)).lease;
  ASSERT_TRUE(sweep.has_value());
  EXPECT_EQ(budget.used_bytes(), 950u);
  // The next one waits (1,050 > 1,000) — but ahead of the periodic one.
  EXPECT_FALSE(budget.Reserve(100, true, granted.For(3)).lease.has_value());
  sweep->Release();  // 700 + 100 urgent fits; then 700 + 100 ordinary does not (> 750)
  EXPECT_EQ(granted.Tags(), (std::vector<int>{3}));
  periodic->Release();  // 100 + 100 <= 750
  EXPECT_EQ(granted.Tags(), (std::vector<int>{3, 1}));
}

// A sweep over thousands of devices keeps urgent reservations waiting for minutes; the periodic captures
// that arrive meanwhile still get the eighth urgent ones may not take — one capture at least.
TEST(InflightBudgetTest, WhileUrgentReservationsWaitOrdinaryOnesKeepAnEighth) {
  InflightBudget budget(Capacity(1000));
  Granted granted;
  std::optional<Lease> sweeps = budget.Reserve(800, true, nullptr).lease;
  ASSERT_TRUE(sweeps.has_value());
  EXPECT_FALSE(budget.Reserve(100, true, granted.For(1)).lease.has_value());  // urgent: 900 > 875
  std::optional<Lease> periodic = budget.Reserve(100, false, nullptr).lease;  // 100 <= 1000 - 875
  ASSERT_TRUE(periodic.has_value());
  EXPECT_FALSE(budget.Reserve(50, false, granted.For(2)).lease.has_value());  // 150 > 125 while sweeps wait
  periodic->Release();  // the urgent one still does not fit (900 > 875); the periodic one does
  EXPECT_EQ(granted.Tags(), (std::vector<int>{2}));
  sweeps->Release();
  EXPECT_EQ(granted.Tags(), (std::vector<int>{2, 1}));
  // Alone, one periodic capture always goes, even larger than the eighth.
  granted.Release(1);
  granted.Release(2);
  std::optional<Lease> big = budget.Reserve(870, true, nullptr).lease;
  EXPECT_FALSE(budget.Reserve(100, true, granted.For(3)).lease.has_value());
  EXPECT_TRUE(budget.Reserve(130, false, nullptr).lease.has_value());  // 1,000 <= 1,000; none held before
}

// Periodic captures always get room one at a time, so an urgent reservation larger than the urgent share
// cannot wait for the budget to empty: it goes once no other urgent one holds room and it fits the budget.
TEST(InflightBudgetTest, AnUrgentReservationLargerThanItsShareGoesOnceNoOtherUrgentOneHoldsRoom) {
  InflightBudget budget(Capacity(1000));
  Granted granted;
  std::optional<Lease> periodic = budget.Reserve(100, false, nullptr).lease;
  std::optional<Lease> sweep = budget.Reserve(100, true, nullptr).lease;
  ASSERT_TRUE(periodic.has_value() && sweep.has_value());
  EXPECT_FALSE(budget.Reserve(900, true, granted.For(1)).lease.has_value());  // 1,100 > 1,000
  sweep->Release();                                                           // 100 + 900 <= 1,000, though 900 > 875
  EXPECT_EQ(granted.Tags(), (std::vector<int>{1}));
  EXPECT_EQ(budget.used_bytes(), 1000u);
}

TEST(InflightBudgetTest, AReservationLargerThanTheBudgetIsGrantedAloneOnceNothingIsHeld) {
  InflightBudget budget(Capacity(1000));
  Granted granted;
  std::optional<Lease> small = budget.Reserve(10, false, nullptr).lease;
  ASSERT_TRUE(small.has_value());
  EXPECT_FALSE(budget.Reserve(5000, false, granted.For(1)).lease.has_value());
  EXPECT_FALSE(budget.Reserve(10, false, granted.For(2)).lease.has_value());  // behind the big one
  small->Release();
  EXPECT_EQ(granted.Tags(), (std::vector<int>{1}));
  EXPECT_EQ(budget.used_bytes(), 5000u);
  granted.Release(1);
  EXPECT_EQ(granted.Tags(), (std::vector<int>{1, 2}));
  EXPECT_EQ(budget.used_bytes(), 10u);
  // With nothing held, one that large is granted at once.
  granted.Release(2);
  EXPECT_TRUE(budget.Reserve(5000, false, nullptr).lease.has_value());
}

TEST(InflightBudgetTest, ACancelledWaiterIsNeverGrantedAndNoLongerHoldsUpThoseBehindIt) {
  InflightBudget budget(Capacity(1000));
  Granted granted;
  std::optional<Lease> held = budget.Reserve(600, false, nullptr).lease;
  InflightBudget::Reservation big = budget.Reserve(700, false, granted.For(1));
  InflightBudget::Reservation small = budget.Reserve(100, false, granted.For(2));
  ASSERT_NE(big.waiter, 0u);
  ASSERT_NE(small.waiter, 0u);
  EXPECT_TRUE(budget.Cancel(big.waiter));  // 600 + 100 fit once the big one is out of the way
  EXPECT_EQ(granted.Tags(), (std::vector<int>{2}));
  EXPECT_FALSE(budget.Cancel(big.waiter));
  EXPECT_FALSE(budget.Cancel(small.waiter));  // already granted: its grant ran
  held->Release();
  EXPECT_EQ(granted.Tags(), (std::vector<int>{2}));
  EXPECT_EQ(budget.used_bytes(), 100u);
}

TEST(InflightBudgetTest, APromotedWaiterGoesAheadOfTheOrdinaryOnes) {
  InflightBudget budget(Capacity(1000));
  Granted granted;
  std::optional<Lease> held = budget.Reserve(700, false, nullptr).lease;
  InflightBudget::Reservation a = budget.Reserve(200, false, granted.For(1));
  InflightBudget::Reservation b = budget.Reserve(200, false, granted.For(2));
  // b's stream was asked for a sweep's capture: b may now hold urgent room, and 700 + 200 <= 1,000.
  budget.Promote(b.waiter);
  EXPECT_EQ(granted.Tags(), (std::vector<int>{2}));
  budget.Promote(a.waiter + 1000);  // unknown: nothing happens
  held->Release();
  EXPECT_EQ(granted.Tags(), (std::vector<int>{2, 1}));
}

TEST(InflightBudgetTest, AMergedLeaseGivesBackEverythingAtOnce) {
  InflightBudget budget(Capacity(1000));
  Lease lease;
  EXPECT_EQ(lease.bytes(), 0u);
  lease.Merge(*budget.Reserve(100, false, nullptr).lease);
  lease.Merge(*budget.Reserve(50, false, nullptr).lease);
  EXPECT_EQ(lease.bytes(), 150u);
  EXPECT_EQ(budget.used_bytes(), 150u);
  lease.Release();
  EXPECT_EQ(budget.used_bytes(), 0u);
}

TEST(InflightBudgetTest, AShrunkLeaseGivesBackTheRestAndGrantsTheWaiting) {
  InflightBudget budget(Capacity(1000));
  Granted granted;
  std::optional<Lease> lease = budget.Reserve(700, false, nullptr).lease;
  ASSERT_TRUE(lease.has_value());
  EXPECT_FALSE(budget.Reserve(300, false, granted.For(1)).lease.has_value());  // 1,000 > 750
  lease->ShrinkTo(100);                                                        // accounted: only its record is left
  EXPECT_EQ(lease->bytes(), 100u);
  EXPECT_EQ(granted.Tags(), (std::vector<int>{1}));
  EXPECT_EQ(budget.used_bytes(), 400u);
  lease->ShrinkTo(500);  // never grows
  EXPECT_EQ(lease->bytes(), 100u);
  lease->Release();
  EXPECT_EQ(budget.used_bytes(), 300u);
}

TEST(InflightBudgetTest, ACaptureIsChargedForItsNodesTwiceOverAndOneChunkMessage) {
  // 180,000 content bytes and 350 nodes (a sample device): 2 x (180,000 + 350 x 160) + 262,144.
  EXPECT_EQ(InflightBytesOfCapture(180000, 350), 734144u);
  EXPECT_EQ(InflightBytesOfCapture(0, 0), 262144u);
  EXPECT_EQ(InflightBytesOfHeld(1000), 264144u);
  // A hostile Begin's counts do not overflow the charge.
  EXPECT_GT(InflightBytesOfCapture(UINT64_MAX, UINT64_MAX), size_t{1} << 40);
}

// Streams reserving, waiting and releasing from many threads at once: the bytes held never exceed the
// budget (each reservation here is smaller than it), and every reservation is granted exactly once.
TEST(InflightBudgetTest, ThreadsNeverHoldMoreThanTheBudgetAndEveryReservationIsGranted) {
  constexpr size_t kCapacity = 10000;
  InflightBudget budget(Capacity(kCapacity));
  std::atomic<size_t> held{0}, most{0}, grants{0};
  absl::Mutex mu;
  std::vector<Lease> granted_later;  // under mu
  auto hold = [&](size_t bytes) {
    const size_t now = held.fetch_add(bytes) + bytes;
    size_t seen = most.load();
    while (now > seen && !most.compare_exchange_weak(seen, now)) {
    }
  };
  constexpr int kThreads = 8, kEach = 300;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        const size_t bytes = 100 + static_cast<size_t>((t * 131 + i * 17) % 1900);
        const bool urgent = i % 7 == 0;
        InflightBudget::Reservation r = budget.Reserve(bytes, urgent, [&, bytes](Lease lease) {
          hold(bytes);
          ++grants;
          absl::MutexLock lock(&mu);
          granted_later.push_back(std::move(lease));
        });
        if (r.lease.has_value()) {
          hold(bytes);
          ++grants;
          held -= bytes;
          r.lease->Release();
        }
        // Give back what others were granted meanwhile, as their captures would be answered.
        std::vector<Lease> done;
        {
          absl::MutexLock lock(&mu);
          done.swap(granted_later);
        }
        for (Lease& l : done) {
          held -= l.bytes();
          l.Release();
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  // Drain: what is still granted is released, which grants the rest.
  for (;;) {
    std::vector<Lease> done;
    {
      absl::MutexLock lock(&mu);
      done.swap(granted_later);
    }
    if (done.empty()) break;
    for (Lease& l : done) {
      held -= l.bytes();
      l.Release();
    }
  }
  EXPECT_EQ(grants.load(), static_cast<size_t>(kThreads * kEach));
  EXPECT_EQ(budget.waiting(), 0u);
  EXPECT_EQ(budget.used_bytes(), 0u);
  EXPECT_LE(most.load(), kCapacity);
  EXPECT_LE(budget.peak_used_bytes(), kCapacity);
}

}  // namespace
}  // namespace memfleet::server
