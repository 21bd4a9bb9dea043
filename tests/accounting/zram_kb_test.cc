// ZramUsedKb: dumpsys' ZRAM figure, and null (not 0) when swap is in use but no zram node was captured.
#include "accounting/zram_kb.h"

#include <gtest/gtest.h>

#include <vector>

namespace memfleet::accounting {
namespace {

TEST(ZramKbTest, SumsTheThirdFieldOfMmStat) {
  // 363939603 bytes = 355409.7 kB (the Rockchip sample's zram0), + 2048 bytes of a second device.
  std::vector<ZramDeviceText> devs = {
      {"zram0", "1452757800 363189450 363939603        0 363939603       12        3        0        0\n",
       std::nullopt},
      {"zram1", std::nullopt, "2048\n"}};
  ZramFigure z = ZramUsedKb(devs, 1000);
  EXPECT_EQ(z.zram_kb, Kb(355411));  // floor((363939603 + 2048) / 1024)
  EXPECT_FALSE(z.warning.has_value());
}

TEST(ZramKbTest, NoDeviceAndNoSwapUsedIsZero) {
  ZramFigure z = ZramUsedKb({}, 0);
  EXPECT_EQ(z.zram_kb, Kb(0));
  EXPECT_FALSE(z.warning.has_value());
}

// OnePlus 9: 473 MB swapped and no zram node in the capture; 0 would let Lost RAM absorb it.
TEST(ZramKbTest, NoDeviceWhileSwapIsInUseIsNull) {
  ZramFigure z = ZramUsedKb({}, 484352);
  EXPECT_FALSE(z.zram_kb.has_value());
  ASSERT_TRUE(z.warning.has_value());
  EXPECT_NE(z.warning->find("zram"), std::string::npos);
  EXPECT_NE(z.warning->find("484352 kB of swap"), std::string::npos) << *z.warning;
}

TEST(ZramKbTest, NoDeviceAndSwapUnknownIsNull) {
  ZramFigure z = ZramUsedKb({}, std::nullopt);
  EXPECT_FALSE(z.zram_kb.has_value());
  EXPECT_TRUE(z.warning.has_value());
}

TEST(ZramKbTest, AnUnreadableOrMalformedDeviceMakesItNull) {
  for (const ZramDeviceText& bad :
       {ZramDeviceText{"zram1", std::nullopt, std::nullopt}, ZramDeviceText{"zram1", "12 34\n", std::nullopt},
        ZramDeviceText{"zram1", std::nullopt, "-5\n"}}) {
    ZramFigure z = ZramUsedKb({{"zram0", std::nullopt, "4096\n"}, bad}, 0);
    EXPECT_FALSE(z.zram_kb.has_value());
    ASSERT_TRUE(z.warning.has_value());
    EXPECT_NE(z.warning->find("sys/block/zram1"), std::string::npos) << *z.warning;
  }
}

}  // namespace
}  // namespace memfleet::accounting
