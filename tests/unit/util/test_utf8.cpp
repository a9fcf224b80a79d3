#include "mixseq/util/utf8.h"

#include <gtest/gtest.h>

#include "mixseq/util/error.h"

namespace mixseq {
namespace {

TEST(Utf8, FindsFirstMalformedByte) {
  EXPECT_FALSE(find_invalid_utf8("plain ascii").has_value());
  EXPECT_FALSE(find_invalid_utf8("zw\xC3\xB6lf \xE2\x82\xAC \xF0\x9F\x98\x80").has_value());  // ö € 😀
  EXPECT_EQ(find_invalid_utf8("ab\xFFz"), 2u);              // byte that never starts a sequence
  EXPECT_EQ(find_invalid_utf8("ab\xC3"), 2u);               // truncated two-byte sequence
  EXPECT_EQ(find_invalid_utf8("\xC0\xAF"), 0u);             // overlong "/"
  EXPECT_EQ(find_invalid_utf8("x\xED\xA0\x80"), 1u);        // UTF-16 surrogate D800
  EXPECT_EQ(find_invalid_utf8("\xF4\x90\x80\x80"), 0u);     // above U+10FFFF
  EXPECT_EQ(find_invalid_utf8("\xE2\x28\xA1"), 0u);         // bad continuation byte
}

TEST(Utf8, DecodeEncodeRoundTrip) {
  const std::string text = "gr\xC3\xBC\xC3\x9F dich \xE2\x82\xAC \xF0\x9F\x98\x80";
  const std::u32string points = decode_utf8(text);
  EXPECT_EQ(points, (std::u32string{U'g', U'r', 0xFC, 0xDF, U' ', U'd', U'i', U'c', U'h', U' ', 0x20AC,
                                    U' ', 0x1F600}));
  EXPECT_EQ(encode_utf8(points), text);
  EXPECT_EQ(utf8_length(text), points.size());
  EXPECT_THROW(decode_utf8("\xFF"), Error);
}

TEST(Utf8, SplitsIntoCodePoints) {
  const auto chars = split_utf8_chars("a\xC3\xA4\xE2\x82\xAC");
  ASSERT_EQ(chars.size(), 3u);
  EXPECT_EQ(chars[1], "\xC3\xA4");
  EXPECT_EQ(chars[2], "\xE2\x82\xAC");
}

TEST(Utf8, SplitWhitespaceMatchesPythonStrSplit) {
  // Python: "\u00a0 a\tb\u3000c \x1c d  ".split() == ['a', 'b', 'c', 'd']
  const auto fields = split_whitespace("\xC2\xA0 a\tb\xE3\x80\x80" "c \x1c d  ");
  ASSERT_EQ(fields.size(), 4u);
  EXPECT_EQ(fields[0], "a");
  EXPECT_EQ(fields[1], "b");
  EXPECT_EQ(fields[2], "c");
  EXPECT_EQ(fields[3], "d");
  EXPECT_TRUE(split_whitespace("   ").empty());
  // U+200B (zero width space) is not whitespace for Python.
  EXPECT_EQ(split_whitespace("a\xE2\x80\x8B" "b").size(), 1u);
}

TEST(Utf8, SplitOnSpaceKeepsEmptyFields) {
  const auto fields = split_on_space(" a  b ");
  ASSERT_EQ(fields.size(), 5u);  // Python: " a  b ".split(' ') == ['', 'a', '', 'b', '']
  EXPECT_EQ(fields[1], "a");
  EXPECT_EQ(fields[2], "");
}

TEST(Utf8, StripRemovesUnicodeWhitespaceAtBothEnds) {
  EXPECT_EQ(strip_whitespace("\xE3\x80\x80 a b\t\xC2\xA0"), "a b");
  EXPECT_EQ(strip_whitespace(" \n"), "");
  EXPECT_EQ(strip_whitespace("x"), "x");
}

TEST(Utf8, RstripKeepsLeadingWhitespace) {
  // Python: " a b\u3000\x85\r".rstrip() == " a b"
  EXPECT_EQ(rstrip_whitespace(" a b\xE3\x80\x80\xC2\x85\r"), " a b");
  EXPECT_EQ(rstrip_whitespace("\xEF\xBB\xBFx \t"), "\xEF\xBB\xBFx");  // U+FEFF is not whitespace
  EXPECT_EQ(rstrip_whitespace("  "), "");
}

TEST(Utf8, SplitPythonLinesKeepsEveryBoundaryPythonKnows) {
  // Python: "a\r\nb\rc\x0cd\x1ce\u2028f\x85g\n\nh".splitlines(keepends=True)
  const auto lines = split_python_lines("a\r\nb\rc\x0c" "d\x1c" "e\xE2\x80\xA8" "f\xC2\x85" "g\n\nh");
  const std::vector<std::string_view> expected = {"a\r\n", "b\r", "c\x0c", "d\x1c", "e\xE2\x80\xA8",
                                                  "f\xC2\x85", "g\n", "\n", "h"};
  EXPECT_EQ(lines, expected);
  EXPECT_TRUE(split_python_lines("").empty());
  // U+00A0 (C2 A0) and U+2027 (E2 80 A7) share lead bytes with boundaries but are none.
  EXPECT_EQ(split_python_lines("x\xC2\xA0y\xE2\x80\xA7z\n").size(), 1u);
}

}  // namespace
}  // namespace mixseq
