// The shared checks of untrusted text: errno names, bounded alphabets, control bytes, the printable form
// of a value in messages, and the code points tables and /metrics show as escapes.
#include "common/untrusted_text.h"

#include <cstdint>
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

TEST(DecodeUtf8Test, ValidSequencesAndTheirCodePoints) {
  char32_t cp = 0;
  EXPECT_EQ(DecodeUtf8("a", 0, &cp), 1u);
  EXPECT_EQ(cp, U'a');
  EXPECT_EQ(DecodeUtf8("\xe2\x80\xae", 0, &cp), 3u);
  EXPECT_EQ(cp, char32_t{0x202E});
  EXPECT_EQ(DecodeUtf8("x\xf0\x9f\x93\xb1", 1, &cp), 4u);
  EXPECT_EQ(cp, char32_t{0x1F4F1});
  EXPECT_EQ(DecodeUtf8("\xc0\xaf", 0, &cp), 0u) << "overlong";
  EXPECT_EQ(DecodeUtf8("\xed\xa0\x80", 0, &cp), 0u) << "surrogate";
  EXPECT_EQ(DecodeUtf8("\xf4\x90\x80\x80", 0, &cp), 0u) << "past U+10FFFF";
  EXPECT_EQ(DecodeUtf8("\xe2\x80", 0, &cp), 0u) << "cut short";
  EXPECT_EQ(DecodeUtf8("\x80", 0, &cp), 0u) << "a stray continuation byte";
}

TEST(IsUnsafeCodePointTest, ControlsAndBidiFormattingButNotText) {
  for (char32_t cp : {0x00, 0x09, 0x0A, 0x1B, 0x7F, 0x85, 0x9B, 0x061C, 0x200E, 0x200F, 0x202A, 0x202E, 0x2066, 0x2069,
                      0x2028, 0x2029}) {
    EXPECT_TRUE(IsUnsafeCodePoint(cp)) << std::hex << static_cast<uint32_t>(cp);
  }
  for (char32_t cp : {0x20, 0x41, 0x7E, 0xA0, 0xE9, 0x05D0, 0x0627, 0x200D, 0x2030, 0x2065, 0x206A, 0x1F4F1}) {
    EXPECT_FALSE(IsUnsafeCodePoint(cp)) << std::hex << static_cast<uint32_t>(cp);
  }
}

TEST(VisibleEscapeTest, AsTheTablesShowThem) {
  EXPECT_EQ(VisibleEscape(0x1B), "\\x1b");
  EXPECT_EQ(VisibleEscape(0x00), "\\x00");
  EXPECT_EQ(VisibleEscape(0x9B), "\\u009b");
  EXPECT_EQ(VisibleEscape(0x202E), "\\u202e");
}

}  // namespace
}  // namespace memfleet
