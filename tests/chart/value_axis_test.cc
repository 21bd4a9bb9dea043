#include "chart/value_axis.h"

#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace memfleet::chart {
namespace {

std::vector<std::string> Labels(long double min_kb, long double max_kb) { return NiceValueAxis(min_kb, max_kb).labels; }

void ExpectCoversWithEvenSteps(const ValueAxis& axis, long double min_kb, long double max_kb) {
  ASSERT_GE(axis.ticks_kb.size(), 2u);
  EXPECT_LE(axis.ticks_kb.size(), 6u);
  EXPECT_EQ(axis.labels.size(), axis.ticks_kb.size());
  EXPECT_LE(axis.lo_kb, min_kb);
  EXPECT_GE(axis.hi_kb, max_kb);
  EXPECT_EQ(axis.ticks_kb.front(), axis.lo_kb);
  EXPECT_EQ(axis.ticks_kb.back(), axis.hi_kb);
  const long double step = axis.ticks_kb[1] - axis.ticks_kb[0];
  for (size_t i = 1; i < axis.ticks_kb.size(); ++i) {
    EXPECT_NEAR(static_cast<double>(axis.ticks_kb[i] - axis.ticks_kb[i - 1]), static_cast<double>(step),
                static_cast<double>(step) * 1e-9);
  }
  EXPECT_EQ(std::set<std::string>(axis.labels.begin(), axis.labels.end()).size(), axis.labels.size())
      << "two ticks read the same";
}

// The chart that drew two "29.1 MiB" ticks: a process between 29.05 and 29.15 MB.
TEST(NiceValueAxisTest, ANarrowRangeGetsEnoughDecimalsToTellTicksApart) {
  const ValueAxis axis = NiceValueAxis(29747, 29850);  // kB: 29.050 to 29.150 MB
  ExpectCoversWithEvenSteps(axis, 29747, 29850);
  EXPECT_EQ(axis.labels, (std::vector<std::string>{"29.00 MiB", "29.05 MiB", "29.10 MiB", "29.15 MiB", "29.20 MiB"}));
}

TEST(NiceValueAxisTest, StepsAreOneTwoTwoAndAHalfOrFive) {
  // 97.7 to 195.3 MB: steps of 20 MB would need 7 ticks, so 25 MB.
  EXPECT_EQ(Labels(100000, 200000),
            (std::vector<std::string>{"75 MiB", "100 MiB", "125 MiB", "150 MiB", "175 MiB", "200 MiB"}));
  EXPECT_EQ(Labels(1, 3), (std::vector<std::string>{"1 kB", "2 kB", "3 kB"}));  // no fractions of a kB
  EXPECT_EQ(Labels(0, 1000), (std::vector<std::string>{"0 kB", "200 kB", "400 kB", "600 kB", "800 kB", "1000 kB"}));
  // 1.5 to 3.2 GB.
  EXPECT_EQ(Labels(1.5L * 1024 * 1024, 3.2L * 1024 * 1024),
            (std::vector<std::string>{"1.5 GiB", "2.0 GiB", "2.5 GiB", "3.0 GiB", "3.5 GiB"}));
}

TEST(NiceValueAxisTest, AFlatSeriesIsWidenedAroundItsValue) {
  const ValueAxis axis = NiceValueAxis(5000, 5000);  // 4.88 MB, widened by 5%
  ExpectCoversWithEvenSteps(axis, 5000, 5000);
  EXPECT_EQ(axis.labels, (std::vector<std::string>{"4.6 MiB", "4.8 MiB", "5.0 MiB", "5.2 MiB"}));
  EXPECT_EQ(Labels(0, 0), (std::vector<std::string>{"-1 kB", "0 kB", "1 kB"}));
}

TEST(NiceValueAxisTest, NegativeAndExtremeRangesStayFinite) {
  ExpectCoversWithEvenSteps(NiceValueAxis(-300, 700), -300, 700);
  constexpr long double kMin = static_cast<long double>(std::numeric_limits<int64_t>::min());
  constexpr long double kMax = static_cast<long double>(std::numeric_limits<int64_t>::max());
  for (const auto& [lo, hi] : {std::pair{kMin, kMax}, std::pair{kMax, kMax}, std::pair{kMin, kMin}}) {
    const ValueAxis axis = NiceValueAxis(lo, hi);
    ExpectCoversWithEvenSteps(axis, lo, hi);
    for (const std::string& label : axis.labels) {
      EXPECT_EQ(label.find("nan"), std::string::npos);
      EXPECT_EQ(label.find("inf"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace memfleet::chart
