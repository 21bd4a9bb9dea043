#include "capture/getprop.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/support/test_data.h"

namespace memfleet::capture {
namespace {

using memfleet::testing::ReadTestData;

TEST(GetpropTest, PixelSampleGivesItsFacts) {
  GetpropValues props = ParseGetprop(ReadTestData("nodes/getprop/pixel7_a14.txt"));
  EXPECT_FALSE(props.truncated);
  // "[vendor.multi.line]: [first line" and "second line]" are one value over two lines: both skipped.
  EXPECT_EQ(props.skipped_lines, 2u);
  EXPECT_EQ(props.values.count("vendor.multi.line"), 0u);
  EXPECT_EQ(props.values.at("vendor.empty.value"), "");
  EXPECT_EQ(props.values.at("vendor.brackets"), "a [nested] value");
  EXPECT_EQ(props.values.at("persist.sys.timezone"), "Europe/Zurich");

  AndroidFacts f = AndroidFactsOf(props);
  EXPECT_EQ(f.model, "Pixel 7");
  EXPECT_EQ(f.manufacturer, "Google");
  EXPECT_EQ(f.soc, "GS201");  // ro.soc.model before ro.board.platform
  EXPECT_EQ(f.build_fingerprint, "google/panther/panther:14/UQ1A.240205.004/11269751:user/release-keys");
  EXPECT_EQ(f.build_type, "user");
  EXPECT_EQ(f.abi, "arm64-v8a");
  EXPECT_EQ(f.android_sdk, 34);
  EXPECT_EQ(f.android_version, 14);
}

TEST(GetpropTest, BeforeAndroid12TheSocIsTheBoardPlatform) {
  AndroidFacts f = AndroidFactsOf(ParseGetprop(ReadTestData("nodes/getprop/android11_no_soc_model.txt")));
  EXPECT_EQ(f.soc, "kona");
  EXPECT_EQ(f.model, "IN2023");
  EXPECT_EQ(f.android_sdk, 30);
  EXPECT_EQ(f.android_version, 11);
}

TEST(GetpropTest, ApiLevelsMapToReleases) {
  EXPECT_EQ(AndroidVersionOfSdk(20), std::nullopt);
  EXPECT_EQ(AndroidVersionOfSdk(21), 5);
  EXPECT_EQ(AndroidVersionOfSdk(22), 5);
  EXPECT_EQ(AndroidVersionOfSdk(23), 6);
  EXPECT_EQ(AndroidVersionOfSdk(25), 7);
  EXPECT_EQ(AndroidVersionOfSdk(27), 8);
  EXPECT_EQ(AndroidVersionOfSdk(28), 9);
  EXPECT_EQ(AndroidVersionOfSdk(29), 10);
  EXPECT_EQ(AndroidVersionOfSdk(31), 12);
  EXPECT_EQ(AndroidVersionOfSdk(32), 12);  // 12L
  EXPECT_EQ(AndroidVersionOfSdk(33), 13);
  EXPECT_EQ(AndroidVersionOfSdk(35), 15);
  EXPECT_EQ(AndroidVersionOfSdk(36), 16);
  EXPECT_EQ(AndroidVersionOfSdk(1001), std::nullopt);
}

TEST(GetpropTest, GarbageAndHostileValuesLeaveFactsEmpty) {
  const std::string text =
      "not a property\n"
      "[]: [empty name]\n"
      "[two words]: [x]\n"
      "[ro.product.model]: [Evil\x1b[2Jmodel]\r\n"  // control character: no model
      "[ro.build.version.sdk]: [thirty-four]\n"
      "[ro.product.manufacturer]: [" +
      std::string(257, 'm') +
      "]\n"
      "[ro.build.type]: [userdebug]\r\n";
  GetpropValues props = ParseGetprop(text);
  EXPECT_EQ(props.skipped_lines, 3u);
  AndroidFacts f = AndroidFactsOf(props);
  EXPECT_EQ(f.model, "");
  EXPECT_EQ(f.manufacturer, "");  // 257 bytes: more than a Hello field takes
  EXPECT_EQ(f.android_sdk, std::nullopt);
  EXPECT_EQ(f.android_version, std::nullopt);
  EXPECT_EQ(f.build_type, "userdebug");  // CRLF line ends are taken
}

TEST(GetpropTest, LimitsStopTheParseAndSaySo) {
  std::string many;
  for (size_t i = 0; i <= kMaxGetpropProperties; ++i) many += "[p." + std::to_string(i) + "]: [v]\n";
  GetpropValues props = ParseGetprop(many);
  EXPECT_TRUE(props.truncated);
  EXPECT_EQ(props.values.size(), kMaxGetpropProperties);

  std::string huge = "[ro.product.model]: [Pixel]\n" + std::string(kMaxGetpropBytes, 'x');
  GetpropValues big = ParseGetprop(huge);
  EXPECT_TRUE(big.truncated);
  EXPECT_EQ(AndroidFactsOf(big).model, "Pixel");
  EXPECT_EQ(big.skipped_lines, 1u);

  GetpropValues long_value = ParseGetprop("[k]: [" + std::string(kMaxPropertyValueBytes + 1, 'v') + "]\n");
  EXPECT_EQ(long_value.values.size(), 0u);
  EXPECT_EQ(long_value.skipped_lines, 1u);
}

}  // namespace
}  // namespace memfleet::capture
