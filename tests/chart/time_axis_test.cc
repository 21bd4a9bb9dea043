// The time axis: ticks on round UTC times whatever the samples' own times are, labelled with those
// times, and a span that never collapses below kMinTimeSpanS. Times are worked out by hand from
// 2026-12-02T14:00:00Z = 1796220000 (day 20789 since 1970-01-01, a Wednesday).
#include "chart/time_axis.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace memfleet::chart {
namespace {

constexpr int64_t k1400 = 1796220000;  // 2026-12-02T14:00:00Z

std::vector<int64_t> Ticks(const TimeAxis& axis) {
  std::vector<int64_t> ticks;
  for (long double t : axis.ticks_s) ticks.push_back(static_cast<int64_t>(t));
  return ticks;
}

TEST(TimeAxisTest, HalfHoursOverTwoHours) {
  const TimeAxis axis = NiceTimeAxis(k1400, k1400 + 7200);
  EXPECT_EQ(Ticks(axis), (std::vector<int64_t>{k1400, k1400 + 1800, k1400 + 3600, k1400 + 5400, k1400 + 7200}));
  EXPECT_EQ(axis.labels,
            (std::vector<std::string>{"12-02 14:00", "12-02 14:30", "12-02 15:00", "12-02 15:30", "12-02 16:00"}));
}

// Samples at 14:07:13 and 19:52:41: the ticks are the whole hours between, not the samples' times.
TEST(TimeAxisTest, TicksFallOnWholeHoursNotOnSampleTimes) {
  const TimeAxis axis = NiceTimeAxis(k1400 + 7 * 60 + 13, k1400 + 5 * 3600 + 52 * 60 + 41);
  EXPECT_EQ(Ticks(axis),
            (std::vector<int64_t>{k1400 + 3600, k1400 + 7200, k1400 + 10800, k1400 + 14400, k1400 + 18000}));
  EXPECT_EQ(axis.labels,
            (std::vector<std::string>{"12-02 15:00", "12-02 16:00", "12-02 17:00", "12-02 18:00", "12-02 19:00"}));
  EXPECT_EQ(axis.lo_s, k1400 + 433);
  EXPECT_EQ(axis.hi_s, k1400 + 21161);
}

// Three samples within a minute (16:15:00, :20, :40): the axis is ten minutes about their middle, ticked
// every two whole minutes.
TEST(TimeAxisTest, ShortSpansWidenToTenMinutesOfWholeMinutes) {
  const int64_t t1615 = k1400 + 2 * 3600 + 15 * 60;
  const TimeAxis axis = NiceTimeAxis(t1615, t1615 + 40);
  EXPECT_EQ(axis.hi_s - axis.lo_s, kMinTimeSpanS);
  EXPECT_EQ(axis.lo_s, t1615 + 20 - 300);
  EXPECT_EQ(axis.labels, (std::vector<std::string>{"16:12", "16:14", "16:16", "16:18", "16:20"}));
  for (long double t : axis.ticks_s) EXPECT_EQ(std::fmod(t, 120.0L), 0) << static_cast<int64_t>(t);
}

// One capture, or two in the same second: the axis still spans ten minutes, never a second or nothing.
TEST(TimeAxisTest, OneMomentDoesNotCollapseTheAxis) {
  for (int64_t last : {k1400, k1400 + 1}) {
    const TimeAxis axis = NiceTimeAxis(k1400, last);
    EXPECT_EQ(axis.hi_s - axis.lo_s, kMinTimeSpanS);
    EXPECT_GE(axis.ticks_s.size(), 2u);
    for (size_t i = 1; i < axis.labels.size(); ++i) EXPECT_NE(axis.labels[i], axis.labels[i - 1]);
  }
}

// The dashboard's 30-day window, from 2026-11-02T08:13:00Z: a tick each 7 days at UTC midnight
// (the Thursdays, counting from Thursday 1970-01-01), labelled with the date.
TEST(TimeAxisTest, DaysOverAMonthAtMidnight) {
  const TimeAxis axis = NiceTimeAxis(20759LL * 86400 + 8 * 3600 + 13 * 60, k1400);
  EXPECT_EQ(Ticks(axis), (std::vector<int64_t>{20762LL * 86400, 20769LL * 86400, 20776LL * 86400, 20783LL * 86400}));
  EXPECT_EQ(axis.labels, (std::vector<std::string>{"2026-11-05", "2026-11-12", "2026-11-19", "2026-11-26"}));
}

TEST(TimeAxisTest, AtMostMaxTicksEvenOverTheWholeRange) {  // under UBSan: no overflowing cast
  const TimeAxis axis = NiceTimeAxis(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
  EXPECT_GE(axis.ticks_s.size(), 2u);
  EXPECT_LE(axis.ticks_s.size(), 6u);
  EXPECT_EQ(axis.labels.size(), axis.ticks_s.size());
}

}  // namespace
}  // namespace memfleet::chart
