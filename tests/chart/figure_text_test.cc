// How counts with unknowns are written: the one spelling the CLI's tables and the dashboard's pages share.
#include "chart/figure_text.h"

#include <string>

#include "gtest/gtest.h"

namespace memfleet::chart {
namespace {

TEST(CountWithUnknownTest, UnknownsAreCountedBesideTheKnownNeverDropped) {
  EXPECT_EQ(CountWithUnknown(3, 0), "3");
  EXPECT_EQ(CountWithUnknown(2, 1), "2 (+1 unknown)");
  EXPECT_EQ(CountWithUnknown(0, 2), "0 (+2 unknown)");
}

TEST(CountWithUnknownTest, APartOfACountSaysItsUnknownsTheSameWay) {
  EXPECT_EQ(PartOfCountWithUnknown(2, 3, 0), "2 of 3");
  EXPECT_EQ(PartOfCountWithUnknown(2, 3, 1), "2 of 3 (+1 unknown)");
  EXPECT_EQ(PartOfCountWithUnknown(0, 0, 4), "0 of 0 (+4 unknown)");
}

}  // namespace
}  // namespace memfleet::chart
