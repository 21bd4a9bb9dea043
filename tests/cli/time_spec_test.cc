// --since / --at: spans back from an injected "now" and RFC 3339 times, normalised to UTC "...Z".
#include "cli/time_spec.h"

#include <gtest/gtest.h>

#include <string>

namespace memfleet::cli {
namespace time_spec_test {
namespace {

// 2026-12-02T16:15:00Z. By hand: 2026-12-02 is day 20789 since 1970-01-01 (56 years with 14 leap days
// = 20454 days to 2026-01-01, + 334 days of Jan..Nov + 1), 20789 * 86400 + 16*3600 + 15*60.
constexpr int64_t kNow = 1796228100;

TEST(ParseRfc3339Test, UtcAndOffsets) {
  EXPECT_EQ(ParseRfc3339("1970-01-01T00:00:00Z").value(), 0);
  EXPECT_EQ(ParseRfc3339("2026-12-02T16:15:00Z").value(), kNow);
  EXPECT_EQ(ParseRfc3339("2026-12-02T18:15:00+02:00").value(), kNow);  // 18:15 at +2 is 16:15 UTC
  EXPECT_EQ(ParseRfc3339("2026-12-02T11:45:00-04:30").value(), kNow);
  EXPECT_EQ(ParseRfc3339("2026-12-02t16:15:00.750z").value(), kNow);    // fraction dropped, lower case ok
  EXPECT_EQ(ParseRfc3339("2026-12-02 16:15:00Z").value(), kNow);        // RFC 3339 section 5.6 note
  EXPECT_EQ(ParseRfc3339("2024-02-29T00:00:00Z").value(), 1709164800);  // a leap day
  EXPECT_EQ(ParseRfc3339("1969-12-31T23:59:59Z").value(), -1);
}

TEST(ParseRfc3339Test, RejectsMalformedAndOutOfRange) {
  for (const char* bad : {"", "2026", "2026-12-02", "2026-12-02T16:15Z", "2026-12-02T16:15:00", "2026-13-01T00:00:00Z",
                          "2026-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-12-02T24:00:00Z",
                          "2026-12-02T16:60:00Z", "2026-12-02T16:15:00+2:00", "2026-12-02T16:15:00Zjunk",
                          "2026-12-02T16:15:00.Z", "２０２６-12-02T16:15:00Z", "\xff\xfe\x00garbage"}) {
    absl::StatusOr<int64_t> t = ParseRfc3339(bad);
    EXPECT_FALSE(t.ok()) << bad;
    if (!t.ok()) {
      EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_NE(t.status().message().find("RFC 3339"), std::string::npos) << t.status().message();
    }
  }
}

TEST(FormatRfc3339Test, RoundTripsAndBounds) {
  EXPECT_EQ(FormatRfc3339(0).value(), "1970-01-01T00:00:00Z");
  EXPECT_EQ(FormatRfc3339(kNow).value(), "2026-12-02T16:15:00Z");
  EXPECT_EQ(FormatRfc3339(-1).value(), "1969-12-31T23:59:59Z");
  EXPECT_EQ(FormatRfc3339(253402300799).value(), "9999-12-31T23:59:59Z");
  EXPECT_FALSE(FormatRfc3339(253402300800).ok());
  EXPECT_FALSE(FormatRfc3339(INT64_MIN).ok());
}

TEST(ParseAgoTest, Units) {
  EXPECT_EQ(ParseAgo("30s").value(), 30);
  EXPECT_EQ(ParseAgo("90m").value(), 5400);
  EXPECT_EQ(ParseAgo("24h").value(), 86400);
  EXPECT_EQ(ParseAgo("7d").value(), 604800);
  EXPECT_EQ(ParseAgo("2w").value(), 1209600);
}

TEST(ParseAgoTest, RejectsGarbage) {
  for (const char* bad :
       {"", "d", "7", "7x", "-7d", "0d", "+7d", "7.5h", "7 d", "1e3s", "99999999999999999999d", "9999999999999w"}) {
    EXPECT_FALSE(ParseAgo(bad).ok()) << bad;
  }
}

TEST(ParseTimeSpecTest, SpansCountBackFromNow) {
  EXPECT_EQ(ParseTimeSpec("7d", kNow).value(), "2026-11-25T16:15:00Z");
  EXPECT_EQ(ParseTimeSpec("24h", kNow).value(), "2026-12-01T16:15:00Z");
  EXPECT_EQ(ParseTimeSpec("15m", kNow).value(), "2026-12-02T16:00:00Z");
}

TEST(ParseTimeSpecTest, Rfc3339IsNormalisedToUtc) {
  EXPECT_EQ(ParseTimeSpec("2026-12-02T18:15:00+02:00", kNow).value(), "2026-12-02T16:15:00Z");
  EXPECT_EQ(ParseTimeSpec("2026-11-30T08:00:00Z", kNow).value(), "2026-11-30T08:00:00Z");
  // Milliseconds, which the server keeps, survive the conversion; digits past them are dropped.
  EXPECT_EQ(ParseTimeSpec("2026-12-02T18:15:00.25+02:00", kNow).value(), "2026-12-02T16:15:00.250Z");
  EXPECT_EQ(ParseTimeSpec("2026-11-30T08:00:00.123456Z", kNow).value(), "2026-11-30T08:00:00.123Z");
}

TEST(ParseTimeSpecTest, GarbageIsAUsageErrorWithAnExample) {
  for (const char* bad : {"", "yesterday", "7days", "2026-12-02", "last week", "\x01\x02"}) {
    absl::StatusOr<std::string> t = ParseTimeSpec(bad, kNow);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  }
  EXPECT_NE(ParseTimeSpec("yesterday", kNow).status().message().find("7d"), std::string::npos);
  // A span reaching before year 0000 is an error, not a wrapped time.
  EXPECT_FALSE(ParseTimeSpec("500000w", kNow).ok());
}

}  // namespace
}  // namespace time_spec_test
}  // namespace memfleet::cli
