// Tests for ParseCmdlineName, ParseStatusName and ParseOomScoreAdj (status fixtures: EXPECTED.md
// sections 4 and 10).
#include "accounting/proc_identity.h"

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "tests/support/test_data.h"

namespace memfleet::accounting {
namespace {

using memfleet::testing::ReadTestData;

using namespace std::string_literals;

TEST(ParseCmdlineNameTest, FirstNulSeparatedFieldVerbatim) {
  EXPECT_EQ(ParseCmdlineName("/system/bin/surfaceflinger\0"s), "/system/bin/surfaceflinger");
  EXPECT_EQ(ParseCmdlineName("com.android.systemui\0--flag\0value\0"s), "com.android.systemui");
  EXPECT_EQ(ParseCmdlineName("com.google.android.gms.persistent\0"s), "com.google.android.gms.persistent");
  // A process that rewrote its argv may leave spaces and no NUL at all.
  EXPECT_EQ(ParseCmdlineName("my daemon --verbose"), "my daemon --verbose");
  EXPECT_EQ(ParseCmdlineName(" lead\0"s), " lead");  // verbatim, not trimmed
}

TEST(ParseCmdlineNameTest, KernelThreadsAndGarbage) {
  EXPECT_EQ(ParseCmdlineName(""), "");
  EXPECT_EQ(ParseCmdlineName("\0"s), "");
  EXPECT_EQ(ParseCmdlineName("\0not-a-name\0"s), "");
  EXPECT_EQ(ParseCmdlineName("\xff\xfe\0rest"s), "\xff\xfe");
}

TEST(ParseStatusNameTest, AospStatusFixtures) {
  absl::StatusOr<std::string> server = ParseStatusName(ReadTestData("aosp/system/memory/libmeminfo/testdata1/status"));
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_EQ(*server, "system_server");  // "Name:\tsystem_server", first line of the fixture

  absl::StatusOr<std::string> youtube =
      ParseStatusName(ReadTestData("aosp/frameworks/base/_inline/ProcfsMemoryUtilTest/STATUS_CONTENTS.status"));
  ASSERT_TRUE(youtube.ok()) << youtube.status();
  EXPECT_EQ(*youtube, "android.youtube");
}

TEST(ParseStatusNameTest, InvalidStatusFixturesHaveNoName) {
  for (std::string_view file : {"invalid_VmHWM.status", "invalid_VmRSS.status"}) {
    SCOPED_TRACE(file);
    EXPECT_EQ(ParseStatusName(ReadTestData("aosp/frameworks/base/_inline/ProcfsMemoryUtilTest/" + std::string(file)))
                  .status()
                  .code(),
              absl::StatusCode::kNotFound);
  }
}

TEST(ParseStatusNameTest, SeparatorsAndPosition) {
  EXPECT_EQ(*ParseStatusName("Name:   spaced name  \nState:\tS\n"), "spaced name");
  EXPECT_EQ(*ParseStatusName("Umask:\t0077\nName:\tBinder:1234_2\n"), "Binder:1234_2");
  EXPECT_EQ(*ParseStatusName("Name:\tno_newline"), "no_newline");
  // Only a line that starts with "Name:" counts.
  EXPECT_EQ(*ParseStatusName("VmName:\twrong\nName:\tright\n"), "right");
  EXPECT_EQ(ParseStatusName(" Name:\tindented\n").status().code(), absl::StatusCode::kNotFound);
}

TEST(ParseStatusNameTest, BadInput) {
  EXPECT_EQ(ParseStatusName("").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ParseStatusName("Nam").status().code(), absl::StatusCode::kNotFound);  // truncated
  EXPECT_EQ(ParseStatusName("\0\0\xff\n\x01Name\n"s).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ParseStatusName("name:\tlowercase\n").status().code(), absl::StatusCode::kNotFound);
}

TEST(ParseOomScoreAdjTest, ValidValues) {
  EXPECT_EQ(*ParseOomScoreAdj("900\n"), 900);
  EXPECT_EQ(*ParseOomScoreAdj("0\n"), 0);
  EXPECT_EQ(*ParseOomScoreAdj("-1000\n"), -1000);  // the extremes are valid
  EXPECT_EQ(*ParseOomScoreAdj("1000"), 1000);
  EXPECT_EQ(*ParseOomScoreAdj("  -800 \n"), -800);
  EXPECT_EQ(*ParseOomScoreAdj("\t250\r\n"), 250);
}

TEST(ParseOomScoreAdjTest, BadInput) {
  for (const std::string& bad :
       {""s, "\n"s, "   "s, "abc"s, "9 00"s, "90x"s, "+5"s, "-"s, "0x10"s, "1001"s, "-1001"s,
        "123456789012345678901234567890"s, "-123456789012345678901234567890"s, "90\0"s, "\0"s, "1e3"s, "5.0"s}) {
    SCOPED_TRACE(::testing::PrintToString(bad));
    EXPECT_EQ(ParseOomScoreAdj(bad).status().code(), absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace memfleet::accounting
