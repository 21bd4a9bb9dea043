// JSON from outside the process: size and depth are checked on the raw text, and messages quote
// untrusted values by a short escaped snippet.
#include "common/bounded_json.h"

#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace memfleet {
namespace {

TEST(CheckJsonBoundsTest, CountsArraysAndObjectsOutsideStrings) {
  const JsonBounds bounds{1000, 3};
  EXPECT_TRUE(CheckJsonBounds(R"({"a": [{"b": 1}]})", bounds).ok());
  EXPECT_TRUE(CheckJsonBounds(R"([[1], [2], [3], {"a": []}])", bounds).ok());  // siblings are not nesting
  EXPECT_TRUE(CheckJsonBounds(R"(["[[[[", "\"[[[[{{{{"])", bounds).ok());      // brackets in strings are text
  absl::Status deep = CheckJsonBounds(R"({"a": [{"b": [1]}]})", bounds);
  EXPECT_EQ(deep.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(deep.message(), "nested more than 3 levels deep (at byte 13)");
  // An escaped backslash ends before the quote: the string closes there, and the brackets after it count.
  EXPECT_EQ(CheckJsonBounds(R"(["\\", [[[1]]]])", bounds).code(), absl::StatusCode::kInvalidArgument);
  absl::Status big = CheckJsonBounds(std::string(1001, ' '), bounds);
  EXPECT_EQ(big.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(big.message(), "1001 bytes, more than the 1000 allowed");
}

TEST(ParseBoundedJsonTest, ParsesWithinBoundsAndRefusesTheRest) {
  absl::StatusOr<nlohmann::json> ok = ParseBoundedJson(R"({"a": [1, 2]})", JsonBounds{100, 2});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->at("a").size(), 2u);
  EXPECT_EQ(ParseBoundedJson(R"({"a": [[1]]})", JsonBounds{100, 2}).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<nlohmann::ordered_json> ordered = ParseBoundedOrderedJson(R"({"z": 1, "a": 2})", JsonBounds{100, 2});
  ASSERT_TRUE(ordered.ok()) << ordered.status();
  EXPECT_EQ(ordered->begin().key(), "z");
}

TEST(ParseBoundedJsonTest, SyntaxErrorMessageIsBoundedAndEscaped) {
  // nlohmann's message quotes the token it stopped at: here half a megabyte and a control character.
  const std::string text = "[\"" + std::string(500000, 'x') + "\x01\"]";
  absl::StatusOr<nlohmann::json> r = ParseBoundedJson(text, JsonBounds{1 << 20, 8});
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message().rfind("not valid JSON: parse error at line 1, column ", 0), 0u)
      << r.status().message();
  EXPECT_LE(r.status().message().size(), 16u + 4 * 160 + 3);
  EXPECT_EQ(r.status().message().find('\x01'), std::string::npos);
}

TEST(SnippetTest, JsonValueSnippetNeverDumpsAContainer) {
  EXPECT_EQ(JsonValueSnippet(nlohmann::json(nullptr)), "null");
  EXPECT_EQ(JsonValueSnippet(nlohmann::json(true)), "true");
  EXPECT_EQ(JsonValueSnippet(nlohmann::json(-4096)), "-4096");
  EXPECT_EQ(JsonValueSnippet(nlohmann::json(4096.5)), "4096.5");
  EXPECT_EQ(JsonValueSnippet(nlohmann::json(std::string(1000, 'z'))), "\"" + std::string(kSnippetBytes, 'z') + "\"...");
  EXPECT_EQ(JsonValueSnippet(nlohmann::json::parse("[[1], 2, 3]")), "an array of 3 elements");
  EXPECT_EQ(JsonValueSnippet(nlohmann::json::parse("[1]")), "an array of 1 element");
  EXPECT_EQ(JsonValueSnippet(nlohmann::ordered_json::parse(R"({"a": {"b": 1}})")), "an object of 1 field");
}

}  // namespace
}  // namespace memfleet
