// The checked decimal parser at its limits: UINT64_MAX and one past it, leading zeros, empty text,
// signs and blanks.
#include "common/decimal.h"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "gtest/gtest.h"

namespace memfleet {
namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

// ParseDecimal's value, or nullopt when it refuses the text.
template <typename Int = uint64_t, typename Text>
std::optional<Int> Parsed(const Text& text) {
  Int value = 0;
  if (!ParseDecimal(text, &value)) return std::nullopt;
  return value;
}

TEST(ParseDecimalTest, LargestValueParsesAndOnePastItDoesNot) {
  EXPECT_EQ(Parsed(std::string_view("18446744073709551615")), kMax);
  EXPECT_EQ(Parsed(std::string_view("18446744073709551616")), std::nullopt);
  EXPECT_EQ(Parsed(std::string_view("18446744073709551620")), std::nullopt);  // last digit 0, still over
  EXPECT_EQ(Parsed(std::string_view("99999999999999999999")), std::nullopt);
  EXPECT_EQ(Parsed(std::string_view("184467440737095516150")), std::nullopt);  // 21 digits
}

TEST(ParseDecimalTest, NineteenAndTwentyDigitValuesAroundTheUncheckedRun) {
  EXPECT_EQ(Parsed(std::string_view("9999999999999999999")), uint64_t{9999999999999999999u});
  EXPECT_EQ(Parsed(std::string_view("10000000000000000000")), uint64_t{10000000000000000000u});
}

TEST(ParseDecimalTest, LeadingZerosAreDigitsOfAnyLength) {
  EXPECT_EQ(Parsed(std::string_view("0")), 0u);
  EXPECT_EQ(Parsed(std::string_view("007")), 7u);
  // 30 digits, of which the first 10 are zeros: the value is UINT64_MAX, not an overflow.
  EXPECT_EQ(Parsed(std::string_view("000000000018446744073709551615")), kMax);
  EXPECT_EQ(Parsed(std::string_view("000000000018446744073709551616")), std::nullopt);
  const std::string zeros(200, '0');
  EXPECT_EQ(Parsed(std::string_view(zeros)), 0u);
}

TEST(ParseDecimalTest, EmptySignsAndBlanksAreRefused) {
  EXPECT_EQ(Parsed(std::string_view("")), std::nullopt);
  EXPECT_EQ(Parsed(std::string_view("-1")), std::nullopt);
  EXPECT_EQ(Parsed(std::string_view("+1")), std::nullopt);
  EXPECT_EQ(Parsed(std::string_view("-0")), std::nullopt);
  EXPECT_EQ(Parsed(std::string_view(" 1")), std::nullopt);
  EXPECT_EQ(Parsed(std::string_view("1 ")), std::nullopt);
  EXPECT_EQ(Parsed(std::string_view("1\n")), std::nullopt);
  EXPECT_EQ(Parsed(std::string_view("\t1")), std::nullopt);
  EXPECT_EQ(Parsed(std::string_view("1 2")), std::nullopt);
  EXPECT_EQ(Parsed(std::string_view("0x10")), std::nullopt);
  EXPECT_EQ(Parsed(std::string_view("1e3")), std::nullopt);
  EXPECT_EQ(Parsed(std::string_view("12\0", 3)), std::nullopt);
}

TEST(ParseDecimalTest, BytesJustOutsideTheDigitsAreNotDigits) {
  // '/' and ':' border '0' and '9'; 0xb0 minus '0' wraps in a signed char.
  EXPECT_EQ(Parsed(std::string_view("/")), std::nullopt);
  EXPECT_EQ(Parsed(std::string_view(":")), std::nullopt);
  EXPECT_EQ(Parsed(std::string_view("1\xb0")), std::nullopt);
}

TEST(ParseDecimalTest, TheTargetTypeBoundsTheValue) {
  constexpr int kIntMax = std::numeric_limits<int>::max();
  EXPECT_EQ(Parsed<int>(std::string_view("2147483647")), kIntMax);
  EXPECT_EQ(Parsed<int>(std::string_view("2147483648")), std::nullopt);
  EXPECT_EQ(Parsed<uint8_t>(std::string_view("255")), 255);
  EXPECT_EQ(Parsed<uint8_t>(std::string_view("256")), std::nullopt);
}

TEST(ParseDecimalTest, AbseilAndCStringTextParseAlike) {
  EXPECT_EQ(Parsed(absl::string_view("4096")), 4096u);
  EXPECT_EQ(Parsed("4096"), 4096u);
  EXPECT_EQ(Parsed("-4096"), std::nullopt);
}

TEST(ReadDecimalPrefixTest, StopsAtTheFirstNonDigitAndCountsTheDigits) {
  uint64_t value = 0;
  size_t digits = 0;
  ASSERT_EQ(ReadDecimalPrefix("2048 kB", &value, &digits), DecimalResult::kOk);
  EXPECT_EQ(value, 2048u);
  EXPECT_EQ(digits, 4u);
  ASSERT_EQ(ReadDecimalPrefix("3403776,0\n", &value, &digits), DecimalResult::kOk);
  EXPECT_EQ(value, 3403776u);
  EXPECT_EQ(digits, 7u);
  ASSERT_EQ(ReadDecimalPrefix("0018446744073709551615", &value, &digits), DecimalResult::kOk);
  EXPECT_EQ(value, kMax);
  EXPECT_EQ(digits, 22u);
}

TEST(ReadDecimalPrefixTest, NoDigitsAndOverflowLeaveTheOutputsAlone) {
  uint64_t value = 5;
  size_t digits = 6;
  EXPECT_EQ(ReadDecimalPrefix("", &value, &digits), DecimalResult::kNoDigits);
  EXPECT_EQ(ReadDecimalPrefix(" 1", &value, &digits), DecimalResult::kNoDigits);
  EXPECT_EQ(ReadDecimalPrefix("-1", &value, &digits), DecimalResult::kNoDigits);
  // Overflow is told apart from garbage after the digits: more digits make it worse, not valid.
  EXPECT_EQ(ReadDecimalPrefix("18446744073709551616 kB", &value, &digits), DecimalResult::kOverflow);
  EXPECT_EQ(value, 5u);
  EXPECT_EQ(digits, 6u);
}

}  // namespace
}  // namespace memfleet
