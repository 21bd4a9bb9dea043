#include "storage/timestamp.h"

#include <string>

#include "gtest/gtest.h"

namespace memfleet::storage {
namespace {

std::string Norm(const std::string& text) {
  absl::StatusOr<std::string> r = NormalizeTimestamp(text);
  return r.ok() ? *r : "error: " + std::string(r.status().message());
}

TEST(NormalizeTimestampTest, CanonicalFormIsUnchanged) {
  EXPECT_EQ(Norm("2024-05-01T10:00:00.000Z"), "2024-05-01T10:00:00.000Z");
  EXPECT_EQ(Norm("2024-05-01T10:00:00.123Z"), "2024-05-01T10:00:00.123Z");
  EXPECT_EQ(Norm("1970-01-01T00:00:00.999Z"), "1970-01-01T00:00:00.999Z");
}

TEST(NormalizeTimestampTest, WholeSecondsGetMillisecondsSoStringsSortByTime) {
  // Kept as written, "10:00:00Z" would sort after "10:00:00.500Z" ('Z' > '.').
  EXPECT_EQ(Norm("2024-05-01T10:00:00Z"), "2024-05-01T10:00:00.000Z");
  EXPECT_LT(Norm("2024-05-01T10:00:00Z"), Norm("2024-05-01T10:00:00.500Z"));
  EXPECT_LT(Norm("2024-05-01T10:00:00.999Z"), Norm("2024-05-01T10:00:01Z"));
}

TEST(NormalizeTimestampTest, OffsetsAreConvertedToUtc) {
  EXPECT_EQ(Norm("2024-05-01T12:00:00+02:00"), "2024-05-01T10:00:00.000Z");
  // Crossing a day, a month and a year backwards and forwards.
  EXPECT_EQ(Norm("2024-01-01T01:30:00+05:30"), "2023-12-31T20:00:00.000Z");
  EXPECT_EQ(Norm("2024-02-28T22:00:00-03:00"), "2024-02-29T01:00:00.000Z");  // 2024 is a leap year
  EXPECT_EQ(Norm("2023-02-28T22:00:00-03:00"), "2023-03-01T01:00:00.000Z");
  EXPECT_EQ(Norm("2024-05-01T10:00:00+00:00"), "2024-05-01T10:00:00.000Z");
}

TEST(NormalizeTimestampTest, FractionsBecomeThreeDigitsTruncated) {
  // Kept as written, "10:00:00.5Z" would sort after "10:00:00.25Z".
  EXPECT_EQ(Norm("2024-05-01T10:00:00.5Z"), "2024-05-01T10:00:00.500Z");
  EXPECT_EQ(Norm("2024-05-01T10:00:00.25Z"), "2024-05-01T10:00:00.250Z");
  EXPECT_EQ(Norm("2024-05-01T10:00:00.999999Z"), "2024-05-01T10:00:00.999Z");
  EXPECT_EQ(Norm("2024-05-01T12:00:00.250+02:00"), "2024-05-01T10:00:00.250Z");
}

TEST(NormalizeTimestampTest, LowercaseAndSpaceSeparatorAccepted) {
  EXPECT_EQ(Norm("2024-05-01t10:00:00z"), "2024-05-01T10:00:00.000Z");
  EXPECT_EQ(Norm("2024-05-01 10:00:00Z"), "2024-05-01T10:00:00.000Z");
}

TEST(NormalizeTimestampTest, LeapSecondKept) { EXPECT_EQ(Norm("2016-12-31T23:59:60Z"), "2016-12-31T23:59:60.000Z"); }

TEST(NormalizeTimestampTest, MalformedIsInvalidArgumentNamingTheField) {
  for (const char* bad :
       {"", "2024-05-01", "2024-05-01T10:00:00", "2024-05-01T10:00Z", "2024-13-01T10:00:00Z", "2023-02-29T10:00:00Z",
        "2024-04-31T10:00:00Z", "2024-05-01T24:00:00Z", "2024-05-01T10:60:00Z", "2024-05-01T10:00:61Z",
        "2024-05-01T10:00:00.Z", "2024-05-01T10:00:00+2:00", "2024-05-01T10:00:00+02:00junk", "99999-05-01T10:00:00Z",
        "\xff\xfe\x00garbage", "1714557600", "2024-05-01T10:00:00Zjunk"}) {
    absl::StatusOr<std::string> r = NormalizeTimestamp(bad, "captured_at");
    ASSERT_FALSE(r.ok()) << "accepted \"" << bad << "\" as " << *r;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("captured_at"), std::string::npos) << r.status();
  }
}

TEST(NormalizeTimestampTest, ResultOutsideFourDigitYearsIsRejected) {
  EXPECT_FALSE(NormalizeTimestamp("9999-12-31T23:30:00-01:00").ok());
  EXPECT_FALSE(NormalizeTimestamp("0000-01-01T00:30:00+01:00").ok());
  EXPECT_EQ(Norm("0000-01-01T00:30:00Z"), "0000-01-01T00:30:00.000Z");
}

TEST(NormalizeTimestampTest, HugeFractionDoesNotOverflow) {
  EXPECT_EQ(Norm("2024-05-01T10:00:00." + std::string(10000, '9') + "Z"), "2024-05-01T10:00:00.999Z");
}

}  // namespace
}  // namespace memfleet::storage
