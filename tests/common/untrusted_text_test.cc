// The shared checks of untrusted text: errno names, bounded alphabets, control bytes, and the printable
// form of a value in messages.
#include "common/untrusted_text.h"

#include <string>

#include "gtest/gtest.h"

namespace memfleet {
namespace {

TEST(IsErrnoNameTest, AnEThenCapitalsDigitsAndUnderscoresUpTo32Bytes) {
  EXPECT_TRUE(IsErrnoName("EACCES"));
  EXPECT_TRUE(IsErrnoName("ERRNO_523"));
  EXPECT_TRUE(IsErrnoName("E" + std::string(31, 'X')));   // 32 bytes
  EXPECT_FALSE(IsErrnoName("E" + std::string(32, 'X')));  // 33
  EXPECT_FALSE(IsErrnoName("E"));
  EXPECT_FALSE(IsErrnoName(""));
  EXPECT_FALSE(IsErrnoName("eacces"));
  EXPECT_FALSE(IsErrnoName("XACCES"));
  EXPECT_FALSE(IsErrnoName("EACC ES"));
  EXPECT_FALSE(IsErrnoName("EACCES\n"));
  EXPECT_FALSE(IsErrnoName(std::string("EAC\0S", 5)));
}

TEST(IsBoundedTextOfTest, LengthBoundsAndAlphabet) {
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  EXPECT_TRUE(IsBoundedTextOf("123", 1, 3, digit));
  EXPECT_FALSE(IsBoundedTextOf("1234", 1, 3, digit));
  EXPECT_FALSE(IsBoundedTextOf("", 1, 3, digit));
  EXPECT_TRUE(IsBoundedTextOf("", 0, 3, digit));
  EXPECT_FALSE(IsBoundedTextOf("1a", 1, 3, digit));
}

TEST(HasNoControlBytesTest, C0AndDelAreControlBytesUtf8IsNot) {
  EXPECT_TRUE(HasNoControlBytes("Pixel 8 \xc3\xa9"));
  EXPECT_TRUE(HasNoControlBytes(""));
  EXPECT_FALSE(HasNoControlBytes("a\tb"));
  EXPECT_FALSE(HasNoControlBytes("\x1b[2J"));
  EXPECT_FALSE(HasNoControlBytes("a\x7f"));
  EXPECT_FALSE(HasNoControlBytes(std::string("a\0b", 3)));
}

TEST(SnippetTest, EscapesWhatCouldForgeALogLineAndCutsLongValues) {
  EXPECT_EQ(Snippet("phone-42"), "phone-42");
  // A newline would start a forged log line; ESC moves a terminal's cursor; a quote would end the quoted
  // value early; bytes outside printable ASCII (here a right-to-left override) reorder what is shown.
  EXPECT_EQ(Snippet("a\nb\x1b[2J\x7f\"c\\"), "a\\nb\\x1b[2J\\x7f\\\"c\\\\");
  EXPECT_EQ(Snippet("x\xe2\x80\xaey"), "x\\xe2\\x80\\xaey");
  EXPECT_EQ(Snippet(std::string("nul\0", 4)), "nul\\x00");
  EXPECT_EQ(Snippet("abcdef", 4), "abcd...");
  EXPECT_EQ(Snippet("abcd", 4), "abcd");
  EXPECT_EQ(Snippet(std::string(100, 'x')), std::string(kSnippetBytes, 'x') + "...");
}

TEST(SnippetTest, QuotedSnippetQuotesThenMarksTheCut) {
  EXPECT_EQ(QuotedSnippet("abc"), "\"abc\"");
  EXPECT_EQ(QuotedSnippet("a\"b\\c\nd\x1b\xff"), R"("a\"b\\c\nd\x1b\xff")");
  EXPECT_EQ(QuotedSnippet(std::string(100, 'y'), 5), "\"yyyyy\"...");
}

}  // namespace
}  // namespace memfleet
