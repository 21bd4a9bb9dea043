// The HTTP port's connection bounds: in all and per peer address, each slot given back when its
// connection ends, and one address at its maximum leaving room for the others.
#include "server/http/connection_slots.h"

#include <gtest/gtest.h>

#include <optional>
#include <utility>
#include <vector>

namespace memfleet::server {
namespace {

TEST(ConnectionSlotsTest, OnePeerAtItsMaximumLeavesRoomForOthers) {
  ConnectionSlots slots(/*max_total=*/5, /*max_per_peer=*/2);
  std::vector<ConnectionSlots::Slot> held;
  for (int i = 0; i < 2; ++i) {
    std::optional<ConnectionSlots::Slot> slot = slots.TryTake("127.0.0.1");
    ASSERT_TRUE(slot.has_value());
    held.push_back(std::move(*slot));
  }
  EXPECT_FALSE(slots.TryTake("127.0.0.1").has_value()) << "a third from the same address";
  EXPECT_EQ(slots.taken_by("127.0.0.1"), 2u);
  std::optional<ConnectionSlots::Slot> other = slots.TryTake("127.0.0.2");
  EXPECT_TRUE(other.has_value()) << "another address is let in";
  EXPECT_EQ(slots.taken(), 3u);
}

TEST(ConnectionSlotsTest, TheTotalBoundHoldsAcrossPeers) {
  ConnectionSlots slots(/*max_total=*/3, /*max_per_peer=*/2);
  std::optional<ConnectionSlots::Slot> a1 = slots.TryTake("a"), a2 = slots.TryTake("a"), b1 = slots.TryTake("b");
  ASSERT_TRUE(a1 && a2 && b1);
  EXPECT_FALSE(slots.TryTake("c").has_value()) << "all three taken";
  b1.reset();
  EXPECT_TRUE(slots.TryTake("c").has_value()) << "b's slot came back";
}

TEST(ConnectionSlotsTest, ASlotComesBackOnceWhenItsLastHolderEnds) {
  ConnectionSlots slots(/*max_total=*/4, /*max_per_peer=*/1);
  {
    std::optional<ConnectionSlots::Slot> slot = slots.TryTake("a");
    ASSERT_TRUE(slot.has_value());
    ConnectionSlots::Slot moved(std::move(*slot));
    slot.reset();  // the moved-from slot gives nothing back
    EXPECT_EQ(slots.taken_by("a"), 1u);
    EXPECT_FALSE(slots.TryTake("a").has_value());
  }
  EXPECT_EQ(slots.taken_by("a"), 0u);
  EXPECT_EQ(slots.taken(), 0u);
  EXPECT_TRUE(slots.TryTake("a").has_value());
}

}  // namespace
}  // namespace memfleet::server
