#include "mixseq/text/sacrebleu_tokenizer.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "mixseq/util/error.h"

namespace mixseq {
namespace {

// Expected outputs come from sacreBLEU 2.x's Tokenizer13a / TokenizerV14International /
// TokenizerChar (rebuilt from its source and run under Python 3.11 with regex 2026.5.9).
using Cases = std::vector<std::pair<std::string, std::string>>;

TEST(SacrebleuTokenizer, Tokenizer13aMatchesSacrebleu) {
  // Punctuation, abbreviations, numbers with separators, dashes after digits, HTML entities
  // (unescaped once, in sacreBLEU's order), <skipped>, "-\n" joins, non-ASCII punctuation
  // (untouched by 13a), a byte-order mark (stays glued to the first word), whitespace.
  const Cases cases = {
      {"Hello, world!", "Hello , world !"},
      {"The U.S. economy grew 3.5% in 2019.", "The U . S . economy grew 3.5 % in 2019 ."},
      {"It costs $1,000.50 (approx.), i.e. 1.000,5 EUR.", "It costs $ 1,000.50 ( approx . ) , i . e . 1.000,5 EUR ."},
      {"pages 10-20, a 3-year-old, well-known -5 and 5-", "pages 10 - 20 , a 3 - year-old , well-known -5 and 5 -"},
      {"&quot;Quoted&quot; &amp; &lt;b&gt;bold&lt;/b&gt; &amp;lt; &apos;x&apos;", "\" Quoted \" & < b > bold < / b > < & apos ; x & apos ;"},
      {"before <skipped> after <skip<skipped>ped>", "before after < skipped >"},
      {"hyphen-\nated line\nbreak", "hyphenated line break"},
      {".5 and 5. and .. and ,, and 1.,2", ". 5 and 5 . and . . and , , and 1 . , 2"},
      {"a.b,c 1.b a.1 x,1 1,y", "a . b , c 1 . b a . 1 x , 1 1 , y"},
      {"don't {curly} [square] ~tilde^ `back` _under_ |pipe| @at #hash *star* +plus= <lt>", "don't { curly } [ square ] ~ tilde ^ ` back ` _ under _ | pipe | @ at # hash * star * + plus = < lt >"},
      {"\xC2\xABGuillemets\xC2\xBB \xE2\x80\x9Csmart quotes\xE2\x80\x9D \xE2\x80\x94 em-dash \xE2\x80\xA6 ellipsis", "\xC2\xABGuillemets\xC2\xBB \xE2\x80\x9Csmart quotes\xE2\x80\x9D \xE2\x80\x94 em-dash \xE2\x80\xA6 ellipsis"},
      {"\xEF\xBB\xBF""BOM at start.", "\xEF\xBB\xBF""BOM at start ."},
      {"tab\there  and   spaces ", "tab here and spaces"},
      {"", ""},
      {"   ", ""},
  };
  for (const auto& [line, tokens] : cases) EXPECT_EQ(tokenize_13a(line), tokens) << "line: " << line;
}

TEST(SacrebleuTokenizer, TokenizerIntlMatchesSacrebleu) {
  // Unicode punctuation (\p{P}) split off unless between digits, every symbol (\p{S}) split off,
  // numbers (\p{N}) in other scripts, CJK and Arabic punctuation, emoji with a variation
  // selector (a mark: stays apart), no entity unescaping, the year-final period kept.
  const Cases cases = {
      {"Hello, world!", "Hello , world !"},
      {"The U.S. economy grew 3.5% in 2019.", "The U . S . economy grew 3.5 % in 2019."},
      {"It costs $1,000.50 (approx.), i.e. 1.000,5 EUR.", "It costs $ 1,000.50 ( approx . ) , i . e . 1.000,5 EUR ."},
      {"In 1990. Then 1,5 and ,5 and 5, and 5,a", "In 1990 . Then 1,5 and , 5 and 5 , and 5 , a"},
      {"\xC2\xAB""Bonjour\xC2\xBB, dit-il\xE2\x80\xA6 \xC2\xBFQu\xC3\xA9? \xC2\xA1S\xC3\xAD!", "\xC2\xAB Bonjour \xC2\xBB , dit - il \xE2\x80\xA6 \xC2\xBF Qu\xC3\xA9 ? \xC2\xA1 S\xC3\xAD !"},
      {"Price: 5\xE2\x82\xAC, \xC2\xA3""5, \xC2\xA5""500, 10\xC2\xB0""C, 2\xC2\xB2, \xC2\xBD, \xE2\x85\xA0 II", "Price : 5 \xE2\x82\xAC , \xC2\xA3 5 , \xC2\xA5 500 , 10 \xC2\xB0 C , 2\xC2\xB2 , \xC2\xBD , \xE2\x85\xA0 II"},
      {"math: a+b=c, x<y>z, \xC2\xB1 \xC3\x97 \xC3\xB7 \xE2\x88\x91 \xE2\x88\x9A", "math : a + b = c , x < y > z , \xC2\xB1 \xC3\x97 \xC3\xB7 \xE2\x88\x91 \xE2\x88\x9A"},
      {"emoji \xF0\x9F\x98\x80 and \xE2\x9D\xA4\xEF\xB8\x8F and \xC2\xA9 \xC2\xAE \xE2\x84\xA2", "emoji \xF0\x9F\x98\x80 and \xE2\x9D\xA4 \xEF\xB8\x8F and \xC2\xA9 \xC2\xAE \xE2\x84\xA2"},
      {"\xE3\x80\x82\xE3\x80\x81\xE3\x80\x8C\xE5\xBC\x95\xE7\x94\xA8\xE3\x80\x8D\xEF\xBC\x81\xEF\xBC\x9F\xEF\xBC\x88\xE6\x8B\xAC\xE5\xBC\xA7\xEF\xBC\x89", "\xE3\x80\x82 \xE3\x80\x81 \xE3\x80\x8C \xE5\xBC\x95\xE7\x94\xA8 \xE3\x80\x8D \xEF\xBC\x81 \xEF\xBC\x9F \xEF\xBC\x88 \xE6\x8B\xAC\xE5\xBC\xA7 \xEF\xBC\x89"},
      {"\xD8\xA7\xD9\x84\xD8\xB3\xD9\x84\xD8\xA7\xD9\x85\xD8\x8C \xD8\xB9\xD9\x84\xD9\x8A\xD9\x83\xD9\x85\xD8\x9F", "\xD8\xA7\xD9\x84\xD8\xB3\xD9\x84\xD8\xA7\xD9\x85 \xD8\x8C \xD8\xB9\xD9\x84\xD9\x8A\xD9\x83\xD9\x85 \xD8\x9F"},
      {"\xE0\xA5\xA7\xE0\xA5\xA8,\xE0\xA5\xA9 \xE0\xA5\xA6.\xE0\xA5\xA7 \xD9\xA1\xD9\xAB\xD9\xA2", "\xE0\xA5\xA7\xE0\xA5\xA8,\xE0\xA5\xA9 \xE0\xA5\xA6.\xE0\xA5\xA7 \xD9\xA1\xD9\xAB\xD9\xA2"},
      {"under_score and hy-phen and a\xE2\x80\x90""b and 5\xE2\x80\x93""6", "under _ score and hy - phen and a \xE2\x80\x90 b and 5\xE2\x80\x93""6"},
      {"&quot;not unescaped&quot; <skipped>", "& quot ; not unescaped & quot ; < skipped >"},
      {"\xEF\xBB\xBF""BOM at start.", "\xEF\xBB\xBF""BOM at start ."},
      {"", ""},
  };
  for (const auto& [line, tokens] : cases) EXPECT_EQ(tokenize_intl(line), tokens) << "line: " << line;
}

TEST(SacrebleuTokenizer, TokenizerCharSeparatesEveryCodePoint) {
  const Cases cases = {
      {"\xE6\x88\x91\xE5\x96\x9C\xE6\xAC\xA2\xE7\x8C\xAB\xE3\x80\x82", "\xE6\x88\x91 \xE5\x96\x9C \xE6\xAC\xA2 \xE7\x8C\xAB \xE3\x80\x82"},
      {" a b\t\xC3\xA9 ", "  a   b \t \xC3\xA9  "},
      {"", ""},
  };
  for (const auto& [line, tokens] : cases) EXPECT_EQ(tokenize_char(line), tokens) << "line: " << line;
}

TEST(SacrebleuTokenizer, NoneKeepsTheLine) {
  EXPECT_EQ(bleu_tokenize("  a,b  ", BleuTokenizer::kNone), "  a,b  ");
  EXPECT_EQ(bleu_tokenize("a,b", BleuTokenizer::k13a), "a , b");
}

TEST(SacrebleuTokenizer, NamesRoundTripAndUnknownNamesAreListed) {
  for (auto tokenizer : {BleuTokenizer::k13a, BleuTokenizer::kIntl, BleuTokenizer::kChar, BleuTokenizer::kNone})
    EXPECT_EQ(parse_bleu_tokenizer(bleu_tokenizer_name(tokenizer)), tokenizer);
  try {
    parse_bleu_tokenizer("zh");
    FAIL() << "expected mixseq::Error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "unknown BLEU tokenizer 'zh'; known: 13a, intl, char, none");
  }
}

TEST(SacrebleuTokenizer, MalformedUtf8Throws) {
  EXPECT_THROW(tokenize_13a("a\xFF"), Error);
  EXPECT_THROW(tokenize_intl("a\xC3"), Error);
  EXPECT_THROW(tokenize_char("\xE2\x28\xA1"), Error);
}

}  // namespace
}  // namespace mixseq
