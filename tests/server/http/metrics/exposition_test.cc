// The text format's small rules (Prometheus exposition format 0.0.4): label value escaping, UTF-8, numbers.
#include "server/http/metrics/exposition.h"

#include <gtest/gtest.h>

#include <limits>

namespace memfleet::metrics {
namespace {

TEST(ExpositionTest, LabelValuesEscapeBackslashQuoteAndNewline) {
  EXPECT_EQ(EscapeLabelValue("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  EXPECT_EQ(EscapeLabelValue("tab\tand\rcr"), "tab\tand\rcr") << "only the three the format names";
  EXPECT_EQ(EscapeLabelValue("/system/bin/surfaceflinger"), "/system/bin/surfaceflinger");
}

TEST(ExpositionTest, BytesThatAreNotUtf8BecomeReplacementCharacters) {
  EXPECT_EQ(EscapeLabelValue("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(EscapeLabelValue("\xf0\x9f\x93\xb1"), "\xf0\x9f\x93\xb1") << "a 4-byte code point is kept";
  EXPECT_EQ(EscapeLabelValue("a\xff"), "a\xEF\xBF\xBD");
  EXPECT_EQ(EscapeLabelValue("\xc0\xaf"), "\xEF\xBF\xBD\xEF\xBF\xBD") << "overlong '/'";
  EXPECT_EQ(EscapeLabelValue("\xed\xa0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD") << "a surrogate";
  EXPECT_EQ(EscapeLabelValue("\xe2\x82"), "\xEF\xBF\xBD\xEF\xBF\xBD") << "truncated at the end";
  EXPECT_EQ(EscapeLabelValue(std::string("a\0b", 3)), std::string("a\0b", 3)) << "NUL is valid UTF-8";
}

TEST(ExpositionTest, SampleValues) {
  EXPECT_EQ(FormatSampleValue(1764892800), "1764892800");
  EXPECT_EQ(FormatSampleValue(1764892800.25), "1764892800.25");
  EXPECT_EQ(FormatSampleValue(0.005, 3), "0.005");
  EXPECT_EQ(FormatSampleValue(-0.0), "0");
  EXPECT_EQ(FormatSampleValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatSampleValue(std::numeric_limits<double>::quiet_NaN()), "NaN");
}

TEST(ExpositionTest, FamilyAndSamples) {
  ExpositionWriter out;
  out.Family("x_bytes", "gauge", "Help with \\ and\nnewline.");
  out.Sample("x_bytes", {{"a", "1"}, {"b", "q\""}}, int64_t{42});
  out.Sample("x_bytes", {}, 0.5);
  EXPECT_EQ(out.Take(),
            "# HELP x_bytes Help with \\\\ and\\nnewline.\n# TYPE x_bytes gauge\n"
            "x_bytes{a=\"1\",b=\"q\\\"\"} 42\nx_bytes 0.5\n");
}

}  // namespace
}  // namespace memfleet::metrics
