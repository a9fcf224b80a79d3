#include "mixseq/text/lowercase.h"

#include <gtest/gtest.h>

#include "mixseq/util/error.h"

namespace mixseq {
namespace {

// Expected values are Python 3.11's str.lower() of the same strings.
TEST(Lowercase, MatchesPythonStrLower) {
  EXPECT_EQ(lowercase("HELLO W\xC3\x96rld"), "hello w\xC3\xB6rld");
  // U+0130 İ lowercases to two code points, i + combining dot above.
  EXPECT_EQ(lowercase("\xC4\xB0stanbul I\xCC\x87"), "i\xCC\x87stanbul i\xCC\x87");
  // Final_Sigma: Σ -> ς at the end of a word (also before "."), σ elsewhere and when alone.
  EXPECT_EQ(lowercase("\xCE\x9F\xCE\x94\xCE\x9F\xCE\xA3 \xCE\xA3\xCE\x91\xCE\xA3. \xCE\xA3"),
            "\xCE\xBF\xCE\xB4\xCE\xBF\xCF\x82 \xCF\x83\xCE\xB1\xCF\x82. \xCF\x83");
  // Capital sharp s, a titlecase digraph, a Roman numeral, a fullwidth letter.
  EXPECT_EQ(lowercase("\xE1\xBA\x9E \xC7\x85 \xE2\x85\xA0 \xEF\xBC\xA1"), "\xC3\x9F \xC7\x86 \xE2\x85\xB0 \xEF\xBD\x81");
  EXPECT_EQ(lowercase("ABC\xC2\xB2"), "abc\xC2\xB2");
  EXPECT_EQ(lowercase(""), "");
}

TEST(Lowercase, MalformedUtf8Throws) { EXPECT_THROW(lowercase("A\xFF"), Error); }

}  // namespace
}  // namespace mixseq
