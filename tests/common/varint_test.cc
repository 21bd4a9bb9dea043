// common/varint.h: the byte forms protobuf's encoding documents ("Base 128 Varints", "ZigZag"), and
// refusal of what is not a varint.
#include "common/varint.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace memfleet {
namespace {

std::string Encoded(uint64_t v) {
  std::string out;
  AppendVarint(out, v);
  return out;
}

TEST(VarintTest, BytesAreProtobufs) {
  EXPECT_EQ(Encoded(1), std::string("\x01", 1));
  EXPECT_EQ(Encoded(150), std::string("\x96\x01", 2));  // the documentation's example
  EXPECT_EQ(Encoded(300), std::string("\xac\x02", 2));
  EXPECT_EQ(Encoded(0), std::string("\x00", 1));
  EXPECT_EQ(Encoded(std::numeric_limits<uint64_t>::max()).size(), 10u);
}

TEST(VarintTest, ReadingConsumesOneVarintAndRoundTrips) {
  std::string two;
  AppendVarint(two, 300);
  AppendVarint(two, std::numeric_limits<uint64_t>::max());
  std::string_view in = two;
  EXPECT_EQ(ReadVarint(in), 300u);
  EXPECT_EQ(in.size(), 10u);
  EXPECT_EQ(ReadVarint(in), std::numeric_limits<uint64_t>::max());
  EXPECT_TRUE(in.empty());
}

TEST(VarintTest, TruncatedOverlongAndOverflowingAreRefusedLeavingTheInput) {
  std::string_view truncated("\x96", 1);
  EXPECT_FALSE(ReadVarint(truncated).has_value());
  EXPECT_EQ(truncated.size(), 1u);
  const std::string eleven(10, '\x80');
  std::string_view overlong = eleven;
  EXPECT_FALSE(ReadVarint(overlong).has_value());
  // Ten bytes whose last carries more than the 64th bit.
  std::string_view overflow("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10);
  EXPECT_FALSE(ReadVarint(overflow).has_value());
}

TEST(ZigZagTest, SmallMagnitudesAreSmallNumbers) {
  EXPECT_EQ(ZigZag(0), 0u);
  EXPECT_EQ(ZigZag(-1), 1u);
  EXPECT_EQ(ZigZag(1), 2u);
  EXPECT_EQ(ZigZag(-2), 3u);
  EXPECT_EQ(ZigZag(2147483647), 4294967294u);
  EXPECT_EQ(ZigZag(-2147483648), 4294967295u);
  for (int64_t v : {int64_t{0}, int64_t{-5}, int64_t{123456789}, std::numeric_limits<int64_t>::min(),
                    std::numeric_limits<int64_t>::max()}) {
    EXPECT_EQ(UnZigZag(ZigZag(v)), v);
  }
}

}  // namespace
}  // namespace memfleet
