// ParseKgslBytes: KGSL prints its counters with %lld; a negative one is named as such.
#include "accounting/kgsl_bytes.h"

#include <gtest/gtest.h>

#include <string>

namespace memfleet::accounting {
namespace {

TEST(KgslBytesTest, PlainAndVendorForms) {
  EXPECT_EQ(*ParseKgslBytes("3403776\n"), 3403776u);
  EXPECT_EQ(*ParseKgslBytes("3403776,0\n"), 3403776u);
}

TEST(KgslBytesTest, NegativeIsOutOfRangeAndSaysWhy) {
  absl::StatusOr<uint64_t> v = ParseKgslBytes("-4096\n");
  ASSERT_EQ(v.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(std::string(v.status().message()).find("negative byte count \"-4096\""), std::string::npos) << v.status();
  EXPECT_NE(std::string(v.status().message()).find("%lld"), std::string::npos) << v.status();
}

TEST(KgslBytesTest, NotANumberIsInvalidArgument) {
  EXPECT_EQ(ParseKgslBytes("").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseKgslBytes("abc\n").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace memfleet::accounting
