#include "common/utc_time.h"

#include <chrono>

#include "gtest/gtest.h"

namespace memfleet {
namespace {

using std::chrono::milliseconds;
using std::chrono::system_clock;

// 2026-12-04T00:00:00Z is 1796342400 s (tests/server/ingest/clock_skew_test.cc); 16:15:00.123 two days before
// is 1796342400 - 2 * 86400 + 16 * 3600 + 15 * 60 = 1796228100 s, plus 123 ms.
constexpr int64_t kExampleMs = 1796228100123;

TEST(UtcTimeTest, FormatsMillisecondsAlwaysWithThreeDigits) {
  EXPECT_EQ(FormatUtcMillis(system_clock::time_point(milliseconds(kExampleMs))), "2026-12-02T16:15:00.123Z");
  EXPECT_EQ(FormatUtcMillis(system_clock::time_point(milliseconds(0))), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatUtcMillis(system_clock::time_point(milliseconds(7))), "1970-01-01T00:00:00.007Z");
  EXPECT_EQ(FormatUtcMillis(system_clock::time_point(milliseconds(-1))), "1969-12-31T23:59:59.999Z");
}

TEST(UtcTimeTest, ReadsBothTheMillisecondAndTheOlderWholeSecondForm) {
  EXPECT_EQ(UtcMillisOf("2026-12-02T16:15:00.123Z"), kExampleMs);
  EXPECT_EQ(UtcMillisOf("2026-12-02T16:15:00Z"), kExampleMs - 123);
  EXPECT_EQ(UtcMillisOf("1970-01-01T00:00:00.000Z"), 0);
  EXPECT_EQ(UtcMillisOf("1969-12-31T23:59:59.999Z"), -1);
  EXPECT_EQ(UtcMillisOf("9999-12-31T23:59:60Z"), 253402300800000);  // a leap second counts as the next one
}

TEST(UtcTimeTest, RoundTrips) {
  for (int64_t ms : {int64_t{0}, kExampleMs, int64_t{951782400999} /* 2000-02-29T00:00:00.999Z */}) {
    EXPECT_EQ(UtcMillisOf(FormatUtcMillis(system_clock::time_point(milliseconds(ms)))), ms);
  }
}

TEST(UtcTimeTest, AnythingElseIsNotATime) {
  for (const char* bad :
       {"", "2026-12-02T16:15:00", "2026-12-02T16:15:00.12Z", "2026-12-02T16:15:00.1234Z", "2026-12-02T16:15:00.12xZ",
        "2026-12-02 16:15:00Z", "2026-12-02T16:15:00+00:00", "2026-13-02T16:15:00Z", "2026-12-32T16:15:00Z",
        "2026-12-02T24:00:00Z", "2026-12-02T16:60:00Z", "2026-12-02T16:15:61Z", "2026-12-02T16:15:00.123z"}) {
    EXPECT_EQ(UtcMillisOf(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace memfleet
