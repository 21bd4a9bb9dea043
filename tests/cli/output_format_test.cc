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
  EXPECT_EQ(FormatKbHuman(1024), "1.0 MB");
  EXPECT_EQ(FormatKbHuman(1536), "1.5 MB");           // 1536 / 1024
  EXPECT_EQ(FormatKbHuman(3014795), "2.88 GB");       // 3014795 / 1048576 = 2.875...
  EXPECT_EQ(FormatKbHuman(-2048), "-2.0 MB");
  EXPECT_FALSE(FormatKbHuman(INT64_MIN).empty());     // no overflow on the most negative value
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

TEST(TextTableTest, WidthCountsCodePointsNotBytes) {
  EXPECT_EQ(DisplayWidth("▁▂▃"), 3u);  // 9 bytes of UTF-8
  TextTable t({{"X"}, {"Y"}});
  t.AddRow({"▁▂", "z"});
  EXPECT_EQ(t.Render(2), "  X   Y\n  ▁▂  z\n");
}

}  // namespace
}  // namespace memfleet::cli
