// The shared output helpers: RFC 4180 CSV quoting, kB figures for people, aligned text tables.
#include "cli/output_format.h"

#include <gtest/gtest.h>

#include <string>

namespace memfleet::cli {
namespace {

TEST(CsvFieldTest, PlainTextIsLeftAlone) {
  EXPECT_EQ(CsvField("surfaceflinger"), "surfaceflinger");
  EXPECT_EQ(CsvField(""), "");
  EXPECT_EQ(CsvField("a b;c"), "a b;c");  // spaces and semicolons need no quotes in RFC 4180
}

TEST(CsvFieldTest, CommasQuotesAndLineBreaksAreQuoted) {
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");  // inner quotes doubled
  EXPECT_EQ(CsvField("\""), "\"\"\"\"");
  EXPECT_EQ(CsvField("line1\nline2"), "\"line1\nline2\"");
  EXPECT_EQ(CsvField("cr\rhere"), "\"cr\rhere\"");
}

TEST(CsvFieldTest, TextAFormulaCouldStartWithIsQuotedBehindASingleQuote) {
  EXPECT_EQ(CsvField("=cmd|' /C calc'!A0"), "\"'=cmd|' /C calc'!A0\"");
  EXPECT_EQ(CsvField("+1+2"), "\"'+1+2\"");
  EXPECT_EQ(CsvField("-2+3"), "\"'-2+3\"");
  EXPECT_EQ(CsvField("@SUM(A1:A9)"), "\"'@SUM(A1:A9)\"");
  EXPECT_EQ(CsvField("\t=1"), "\"'\t=1\"");
  EXPECT_EQ(CsvField("\r=1"), "\"'\r=1\"");
  EXPECT_EQ(CsvField("-"), "\"'-\"");
  EXPECT_EQ(CsvField("=HYPERLINK(\"http://x\",\"y\")"), "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"");
  // Only a leading trigger counts.
  EXPECT_EQ(CsvField("a=b"), "a=b");
  EXPECT_EQ(CsvField(" =1"), " =1");
}

TEST(CsvFieldTest, NegativeNumbersStayNumbers) {
  EXPECT_EQ(CsvField("-12"), "-12");
  EXPECT_EQ(CsvField("-0"), "-0");
  EXPECT_EQ(CsvField("-1.5"), "-1.5");
  EXPECT_EQ(CsvField("-1.5e+3"), "-1.5e+3");
  EXPECT_EQ(CsvRow({"pid", CsvKb(-4096), "x"}), "pid,-4096,x\r\n");
  // Not quite numbers: text.
  EXPECT_EQ(CsvField("-12abc"), "\"'-12abc\"");
  EXPECT_EQ(CsvField("-1."), "\"'-1.\"");
  EXPECT_EQ(CsvField("-1e"), "\"'-1e\"");
  EXPECT_EQ(CsvField("--1"), "\"'--1\"");
}

TEST(TerminalSafeTest, ControlCharactersBecomeVisibleEscapes) {
  EXPECT_EQ(TerminalSafe("\x1b]0;owned\x07"), "\\x1b]0;owned\\x07");
  EXPECT_EQ(TerminalSafe("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(TerminalSafe(std::string("nul\0here", 8)), "nul\\x00here");
  EXPECT_EQ(TerminalSafe("del\x7f"), "del\\x7f");
  EXPECT_EQ(TerminalSafe("tab\tcr\rlf\n"), "tab\\x09cr\\x0dlf\\x0a");
  EXPECT_EQ(TerminalSafeLines("one\ntwo\x1b\n"), "one\ntwo\\x1b\n");  // newlines kept, ESC not
}

TEST(TerminalSafeTest, C1ControlsAndBidiOverridesAreEscaped) {
  EXPECT_EQ(TerminalSafe("\xc2\x9b"
                         "2J"),
            "\\u009b2J");                                                   // U+009B CSI
  EXPECT_EQ(TerminalSafe("\xc2\x85"), "\\u0085");                           // U+0085 NEL
  EXPECT_EQ(TerminalSafe("abc\xe2\x80\xaegpj.exe"), "abc\\u202egpj.exe");   // U+202E RLO
  EXPECT_EQ(TerminalSafe("\xe2\x81\xa6x\xe2\x81\xa9"), "\\u2066x\\u2069");  // LRI ... PDI
  EXPECT_EQ(TerminalSafe("\xe2\x80\x8f"), "\\u200f");                       // RLM
}

TEST(TerminalSafeTest, ValidUtf8IsKeptAndInvalidBytesAreEscaped) {
  EXPECT_EQ(TerminalSafe("com.android.systemui"), "com.android.systemui");
  EXPECT_EQ(TerminalSafe("Café 日本 😀 ▁▂"), "Café 日本 😀 ▁▂");
  EXPECT_EQ(TerminalSafe("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(TerminalSafe("cut\xe2\x80"), "cut\\xe2\\x80");              // a sequence cut short
  EXPECT_EQ(TerminalSafe("\xc0\xaf"), "\\xc0\\xaf");                    // overlong "/"
  EXPECT_EQ(TerminalSafe("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a UTF-16 surrogate
  EXPECT_EQ(TerminalSafe("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(TerminalSafe("\x80z"), "\\x80z");                           // a stray continuation byte
  EXPECT_EQ(TerminalSafe(""), "");
}

TEST(CsvRowTest, JoinsWithCommasAndEndsWithCrlf) {
  EXPECT_EQ(CsvRow({"pid", "name", "total_kb"}), "pid,name,total_kb\r\n");
  EXPECT_EQ(CsvRow({"1", "com.x,y", "", "q\""}), "1,\"com.x,y\",,\"q\"\"\"\r\n");
  EXPECT_EQ(CsvRow({}), "\r\n");
}

TEST(CsvKbTest, UnknownIsAnEmptyFieldNotZero) {
  EXPECT_EQ(CsvKb(std::nullopt), "");
  EXPECT_EQ(CsvKb(0), "0");
  EXPECT_EQ(CsvKb(3014795), "3014795");  // no thousands separators in CSV
  EXPECT_EQ(CsvKb(-12), "-12");
}

TEST(FormatKbTest, Separators) {
  EXPECT_EQ(FormatKb(0), "0");
  EXPECT_EQ(FormatKb(999), "999");
  EXPECT_EQ(FormatKb(1000), "1,000");
  EXPECT_EQ(FormatKb(3014795), "3,014,795");
  EXPECT_EQ(FormatKb(-1234567), "-1,234,567");
  EXPECT_EQ(FormatKbOrDash(std::nullopt), "-");
  EXPECT_EQ(FormatKbOrDash(546300), "546,300");
}

TEST(FormatKbHumanTest, BinaryMultiples) {
  EXPECT_EQ(FormatKbHuman(0), "0 kB");
  EXPECT_EQ(FormatKbHuman(1023), "1023 kB");
  EXPECT_EQ(FormatKbHuman(1024), "1.0 MiB");
  EXPECT_EQ(FormatKbHuman(1536), "1.5 MiB");      // 1536 / 1024
  EXPECT_EQ(FormatKbHuman(3014795), "2.88 GiB");  // 3014795 / 1048576 = 2.875...
  EXPECT_EQ(FormatKbHuman(-2048), "-2.0 MiB");
  EXPECT_FALSE(FormatKbHuman(INT64_MIN).empty());  // no overflow on the most negative value
}

TEST(TextTableTest, AlignsColumnsAndTrimsTrailingSpace) {
  TextTable t({{"DEVICE"}, {"KB", TextTable::kRight}, {"NOTE"}});
  t.AddRow({"a", "1,000", ""});
  t.AddRow({"longer-name", "5"});  // short row: padded
  EXPECT_EQ(t.Render(),
            "DEVICE          KB  NOTE\n"
            "a            1,000\n"
            "longer-name      5\n");
  EXPECT_EQ(t.row_count(), 2u);
}

TEST(TextTableTest, HostileCellsAreEscapedAndTheColumnsStayAligned) {
  TextTable t({{"MODEL"}, {"KB", TextTable::kRight}});
  t.AddRow({"\x1b[2J\x07", "1"});
  t.AddRow({"two\nlines", "22"});
  EXPECT_EQ(t.Render(),
            "MODEL         KB\n"
            "\\x1b[2J\\x07    1\n"
            "two\\x0alines  22\n");
}

TEST(TextTableTest, WidthCountsCodePointsNotBytes) {
  EXPECT_EQ(DisplayWidth("▁▂▃"), 3u);  // 9 bytes of UTF-8
  TextTable t({{"X"}, {"Y"}});
  t.AddRow({"▁▂", "z"});
  EXPECT_EQ(t.Render(2), "  X   Y\n  ▁▂  z\n");
}

}  // namespace
}  // namespace memfleet::cli
