// The text format's small rules (Prometheus exposition format 0.0.4): label value escaping, UTF-8, numbers.
#include "server/http/metrics/exposition.h"

#include <gtest/gtest.h>

#include <limits>

namespace memfleet::metrics {
namespace {

TEST(ExpositionTest, LabelValuesEscapeBackslashQuoteAndNewline) {
  EXPECT_EQ(EscapeLabelValue("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  EXPECT_EQ(EscapeLabelValue("/system/bin/surfaceflinger"), "/system/bin/surfaceflinger");
}

// As the CLI's tables show them (cli TerminalSafe): "\x09", "\u202e", with the backslash escaped for the
// format, so that Prometheus reads the label as the six characters \u202e, not the override itself.
TEST(ExpositionTest, ControlsAndBidiFormattingAreWrittenAsVisibleEscapes) {
  EXPECT_EQ(EscapeLabelValue("abc\xe2\x80\xaegpj.exe"), "abc\\\\u202egpj.exe") << "U+202E RLO";
  EXPECT_EQ(EscapeLabelValue("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad"),
            "\\\\u202a\\\\u202b\\\\u202c\\\\u202d")
      << "LRE RLE PDF LRO";
  EXPECT_EQ(EscapeLabelValue("\xe2\x81\xa6x\xe2\x81\xa9"), "\\\\u2066x\\\\u2069") << "LRI, PDI";
  EXPECT_EQ(EscapeLabelValue("\xe2\x80\x8f\xd8\x9c\xe2\x80\xa8"), "\\\\u200f\\\\u061c\\\\u2028") << "RLM ALM LS";
  EXPECT_EQ(EscapeLabelValue("\xc2\x9b"
                             "2J"),
            "\\\\u009b2J")
      << "C1 CSI";
  EXPECT_EQ(EscapeLabelValue("tab\tand\rcr\x1b[0m\x7f"), "tab\\\\x09and\\\\x0dcr\\\\x1b[0m\\\\x7f");
  EXPECT_EQ(EscapeLabelValue(std::string("a\0b", 3)), "a\\\\x00b");
  EXPECT_EQ(EscapeLabelValue("\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d"), "\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d")
      << "right-to-left letters themselves are text";
}

TEST(ExpositionTest, BytesThatAreNotUtf8BecomeReplacementCharacters) {
  EXPECT_EQ(EscapeLabelValue("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(EscapeLabelValue("\xf0\x9f\x93\xb1"), "\xf0\x9f\x93\xb1") << "a 4-byte code point is kept";
  EXPECT_EQ(EscapeLabelValue("a\xff"), "a\xEF\xBF\xBD");
  EXPECT_EQ(EscapeLabelValue("\xc0\xaf"), "\xEF\xBF\xBD\xEF\xBF\xBD") << "overlong '/'";
  EXPECT_EQ(EscapeLabelValue("\xed\xa0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD") << "a surrogate";
  EXPECT_EQ(EscapeLabelValue("\xe2\x82"), "\xEF\xBF\xBD\xEF\xBF\xBD") << "truncated at the end";
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
