#include "mixseq/text/chrf.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mixseq/util/error.h"

namespace mixseq {
namespace {

std::string chrf_with_version(std::string line) {
  const std::string placeholder = "{version}";
  return line.replace(line.find(placeholder), placeholder.size(), signature_version());
}

// Hand-worked example (Popović 2015), character orders 1..2, beta 2:
//   hypothesis "abc", reference "abd"
//   1-grams: a b c vs a b d -> 2 matches: P = R = 2/3
//   2-grams: ab bc vs ab bd -> 1 match:   P = R = 1/2
//   averaged over the orders: P = R = 7/12, so F2 = 5PR / (4P + R) = 7/12 = 58.33
TEST(Chrf, HandWorkedExample) {
  ChrfOptions options;
  options.char_order = 2;
  const ChrfScore s = corpus_chrf({"abc"}, {{"abd"}}, options);
  EXPECT_NEAR(s.score, 100.0 * 7.0 / 12.0, 1e-12);
  EXPECT_EQ(s.statistics, (std::vector<int64_t>{3, 3, 2, 2, 2, 1}));
}

// Beta weighs recall: hypothesis "ab", reference "abcd", unigrams only: P = 1, R = 1/2.
//   F2 = 5 * 1 * 1/2 / (4 + 1/2) = 5/9;  F1 = 2 * 1/2 / (3/2) = 2/3
TEST(Chrf, BetaWeighsRecall) {
  ChrfOptions options;
  options.char_order = 1;
  EXPECT_NEAR(corpus_chrf({"ab"}, {{"abcd"}}, options).score, 100.0 * 5.0 / 9.0, 1e-12);
  options.beta = 1;
  EXPECT_NEAR(corpus_chrf({"ab"}, {{"abcd"}}, options).score, 100.0 * 2.0 / 3.0, 1e-12);
}

// Whitespace is removed before character n-grams unless asked for; the best reference wins.
TEST(Chrf, WhitespaceAndBestReference) {
  EXPECT_EQ(corpus_chrf({"a b"}, {{"ab"}}, {}).score, 100.0);
  ChrfOptions options;
  options.whitespace = true;
  EXPECT_LT(corpus_chrf({"a b"}, {{"ab"}}, options).score, 100.0);
  const ChrfScore best = sentence_chrf("abc", {"abd", "abc"}, {});
  EXPECT_EQ(best.score, 100.0);
  EXPECT_EQ(best.num_refs, 2);
}

struct ChrfGolden {
  std::string name;
  std::vector<std::string> hypotheses;
  std::vector<std::vector<std::string>> references;
  ChrfOptions options;
  double score;      // sacreBLEU's CHRFScore.score
  std::string line;  // sacreBLEU's text line with -w 2
};

// Expected values from sacreBLEU 2.x's CHRF (rebuilt from its source, Python 3.11):
// CHRF(**options).corpus_score(hypotheses, references), printed with width 2. Sentence-level
// cases are one-segment corpora, which is what CHRF.sentence_score computes.
const std::vector<ChrfGolden>& chrf_golden_cases() {
  static const std::vector<ChrfGolden> cases = {
      {"chrF2 defaults", {"The cat sat on the mat.", "It costs $1,000.50 (approx.), or 1.000,5 EUR.", "Pages 10-20 describe a 3-year-old well-known case.", "&quot;Quoted&quot; text &amp; more &lt;tags&gt; <skipped> here.", "He said: \"Don't do it!\"", "", "In 2019, growth was 3.5% - the highest."}, {{"The cat is sitting on the mat.", "It costs $1,000.50 (about), or 1.000,5 EUR.", "Pages 10-20 describe a well-known case of a 3-year-old.", "\"Quoted\" text & more <tags> here.", "He said: \"Do not do it!\"", "Nothing was translated here.", "In 2019, growth was 3.5%, the highest."}}, [] { ChrfOptions o; return o; }(), 64.70664698050795, "chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:{version} = 64.71"},
      {"chrF2++", {"The cat sat on the mat.", "It costs $1,000.50 (approx.), or 1.000,5 EUR.", "Pages 10-20 describe a 3-year-old well-known case.", "&quot;Quoted&quot; text &amp; more &lt;tags&gt; <skipped> here.", "He said: \"Don't do it!\"", "", "In 2019, growth was 3.5% - the highest."}, {{"The cat is sitting on the mat.", "It costs $1,000.50 (about), or 1.000,5 EUR.", "Pages 10-20 describe a well-known case of a 3-year-old.", "\"Quoted\" text & more <tags> here.", "He said: \"Do not do it!\"", "Nothing was translated here.", "In 2019, growth was 3.5%, the highest."}}, [] { ChrfOptions o; o.word_order = 2; return o; }(), 64.31379918893849, "chrF2++|nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:{version} = 64.31"},
      {"best of two references, one missing for a line", {"The cat sat on the mat.", "It costs $1,000.50 (approx.), or 1.000,5 EUR.", "Pages 10-20 describe a 3-year-old well-known case.", "&quot;Quoted&quot; text &amp; more &lt;tags&gt; <skipped> here.", "He said: \"Don't do it!\"", "", "In 2019, growth was 3.5% - the highest."}, {{"The cat is sitting on the mat.", "It costs $1,000.50 (about), or 1.000,5 EUR.", "Pages 10-20 describe a well-known case of a 3-year-old.", "\"Quoted\" text & more <tags> here.", "He said: \"Do not do it!\"", "Nothing was translated here.", "In 2019, growth was 3.5%, the highest."}, {"The cat sat on a mat.", "It costs about $1,000.50, or 1.000,5 EUR.", "", "\"Quoted\" text and more <tags> here.", "He said: \"Don't do that!\"", "Nothing here.", "Growth was 3.5% in 2019 - the highest."}}, [] { ChrfOptions o; return o; }(), 66.83126257630308, "chrF2|nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no|version:{version} = 66.83"},
      {"chrF++ best of two references", {"The cat sat on the mat.", "It costs $1,000.50 (approx.), or 1.000,5 EUR.", "Pages 10-20 describe a 3-year-old well-known case.", "&quot;Quoted&quot; text &amp; more &lt;tags&gt; <skipped> here.", "He said: \"Don't do it!\"", "", "In 2019, growth was 3.5% - the highest."}, {{"The cat is sitting on the mat.", "It costs $1,000.50 (about), or 1.000,5 EUR.", "Pages 10-20 describe a well-known case of a 3-year-old.", "\"Quoted\" text & more <tags> here.", "He said: \"Do not do it!\"", "Nothing was translated here.", "In 2019, growth was 3.5%, the highest."}, {"The cat sat on a mat.", "It costs about $1,000.50, or 1.000,5 EUR.", "", "\"Quoted\" text and more <tags> here.", "He said: \"Don't do that!\"", "Nothing here.", "Growth was 3.5% in 2019 - the highest."}}, [] { ChrfOptions o; o.word_order = 2; return o; }(), 66.14147161621392, "chrF2++|nrefs:2|case:mixed|eff:yes|nc:6|nw:2|space:no|version:{version} = 66.14"},
      {"whitespace kept", {"The cat sat on the mat.", "It costs $1,000.50 (approx.), or 1.000,5 EUR.", "Pages 10-20 describe a 3-year-old well-known case.", "&quot;Quoted&quot; text &amp; more &lt;tags&gt; <skipped> here.", "He said: \"Don't do it!\"", "", "In 2019, growth was 3.5% - the highest."}, {{"The cat is sitting on the mat.", "It costs $1,000.50 (about), or 1.000,5 EUR.", "Pages 10-20 describe a well-known case of a 3-year-old.", "\"Quoted\" text & more <tags> here.", "He said: \"Do not do it!\"", "Nothing was translated here.", "In 2019, growth was 3.5%, the highest."}}, [] { ChrfOptions o; o.whitespace = true; return o; }(), 68.20559615098358, "chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:yes|version:{version} = 68.21"},
      {"beta 1, char order 4", {"The cat sat on the mat.", "It costs $1,000.50 (approx.), or 1.000,5 EUR.", "Pages 10-20 describe a 3-year-old well-known case.", "&quot;Quoted&quot; text &amp; more &lt;tags&gt; <skipped> here.", "He said: \"Don't do it!\"", "", "In 2019, growth was 3.5% - the highest."}, {{"The cat is sitting on the mat.", "It costs $1,000.50 (about), or 1.000,5 EUR.", "Pages 10-20 describe a well-known case of a 3-year-old.", "\"Quoted\" text & more <tags> here.", "He said: \"Do not do it!\"", "Nothing was translated here.", "In 2019, growth was 3.5%, the highest."}}, [] { ChrfOptions o; o.char_order = 4; o.beta = 1; return o; }(), 70.97992343759617, "chrF1|nrefs:1|case:mixed|eff:yes|nc:4|nw:0|space:no|version:{version} = 70.98"},
      {"words only (char order 0)", {"The cat sat on the mat.", "It costs $1,000.50 (approx.), or 1.000,5 EUR.", "Pages 10-20 describe a 3-year-old well-known case.", "&quot;Quoted&quot; text &amp; more &lt;tags&gt; <skipped> here.", "He said: \"Don't do it!\"", "", "In 2019, growth was 3.5% - the highest."}, {{"The cat is sitting on the mat.", "It costs $1,000.50 (about), or 1.000,5 EUR.", "Pages 10-20 describe a well-known case of a 3-year-old.", "\"Quoted\" text & more <tags> here.", "He said: \"Do not do it!\"", "Nothing was translated here.", "In 2019, growth was 3.5%, the highest."}}, [] { ChrfOptions o; o.char_order = 0; o.word_order = 2; return o; }(), 63.089145091785326, "chrF2++|nrefs:1|case:mixed|eff:yes|nc:0|nw:2|space:no|version:{version} = 63.09"},
      {"lowercase", {"THE CAT sat ON the Mat.", "Hello World, \xCE\x9F\xCE\x94\xCE\x9F\xCE\xA3.", "\xC4\xB0stanbul is BIG."}, {{"The cat sat on the mat.", "hello world, \xCE\xBF\xCE\xB4\xCE\xBF\xCF\x82.", "i\xCC\x87stanbul is big."}}, [] { ChrfOptions o; o.lowercase = true; return o; }(), 100.0, "chrF2|nrefs:1|case:lc|eff:yes|nc:6|nw:0|space:no|version:{version} = 100.00"},
      {"eps smoothing", {"The cat sat on the mat.", "It costs $1,000.50 (approx.), or 1.000,5 EUR.", "Pages 10-20 describe a 3-year-old well-known case.", "&quot;Quoted&quot; text &amp; more &lt;tags&gt; <skipped> here.", "He said: \"Don't do it!\"", "", "In 2019, growth was 3.5% - the highest."}, {{"The cat is sitting on the mat.", "It costs $1,000.50 (about), or 1.000,5 EUR.", "Pages 10-20 describe a well-known case of a 3-year-old.", "\"Quoted\" text & more <tags> here.", "He said: \"Do not do it!\"", "Nothing was translated here.", "In 2019, growth was 3.5%, the highest."}}, [] { ChrfOptions o; o.eps_smoothing = true; return o; }(), 64.70589361244446, "chrF2|nrefs:1|case:mixed|eff:no|nc:6|nw:0|space:no|version:{version} = 64.71"},
      {"chrF++ eps smoothing", {"The cat sat on the mat.", "It costs $1,000.50 (approx.), or 1.000,5 EUR.", "Pages 10-20 describe a 3-year-old well-known case.", "&quot;Quoted&quot; text &amp; more &lt;tags&gt; <skipped> here.", "He said: \"Don't do it!\"", "", "In 2019, growth was 3.5% - the highest."}, {{"The cat is sitting on the mat.", "It costs $1,000.50 (about), or 1.000,5 EUR.", "Pages 10-20 describe a well-known case of a 3-year-old.", "\"Quoted\" text & more <tags> here.", "He said: \"Do not do it!\"", "Nothing was translated here.", "In 2019, growth was 3.5%, the highest."}, {"The cat sat on a mat.", "It costs about $1,000.50, or 1.000,5 EUR.", "", "\"Quoted\" text and more <tags> here.", "He said: \"Don't do that!\"", "Nothing here.", "Growth was 3.5% in 2019 - the highest."}}, [] { ChrfOptions o; o.word_order = 2; o.eps_smoothing = true; return o; }(), 66.11975646707644, "chrF2++|nrefs:2|case:mixed|eff:no|nc:6|nw:2|space:no|version:{version} = 66.12"},
      {"CJK and Unicode punctuation", {"\xE6\x88\x91\xE5\x96\x9C\xE6\xAC\xA2\xE5\x90\x83\xE8\x8B\xB9\xE6\x9E\x9C\xE3\x80\x82", "\xE4\xBB\x8A\xE5\xA4\xA9\xE5\xA4\xA9\xE6\xB0\x94\xE5\xBE\x88\xE5\xA5\xBD\xEF\xBC\x81", "\xE6\x9D\xB1\xE4\xBA\xAC\xE3\x81\xAF\xE6\x97\xA5\xE6\x9C\xAC\xE3\x81\xAE\xE9\xA6\x96\xE9\x83\xBD\xE3\x81\xA7\xE3\x81\x99\xE3\x80\x82", "\xC2\xAB""Bonjour\xC2\xBB, dit-il\xE2\x80\xA6 \xC2\xBFQu\xC3\xA9? \xC2\xA1S\xC3\xAD!", "Price: 5\xE2\x82\xAC, \xC2\xA3""5 and 1,000.5 units.", "In 1990. Then 1,5 \xE2\x80\x94 done \xF0\x9F\x98\x80", "a+b=c, x<y>z \xC2\xB1""1"}, {{"\xE6\x88\x91\xE5\xBE\x88\xE5\x96\x9C\xE6\xAC\xA2\xE5\x90\x83\xE8\x8B\xB9\xE6\x9E\x9C\xE3\x80\x82", "\xE4\xBB\x8A\xE5\xA4\xA9\xE7\x9A\x84\xE5\xA4\xA9\xE6\xB0\x94\xE5\xBE\x88\xE5\xA5\xBD\xEF\xBC\x81", "\xE6\x97\xA5\xE6\x9C\xAC\xE3\x81\xAE\xE9\xA6\x96\xE9\x83\xBD\xE3\x81\xAF\xE6\x9D\xB1\xE4\xBA\xAC\xE3\x81\xA7\xE3\x81\x99\xE3\x80\x82", "\xC2\xAB Bonjour \xC2\xBB, dit-il... \xC2\xBFQu\xC3\xA9? \xC2\xA1S\xC3\xAD!", "Price: 5 \xE2\x82\xAC, \xC2\xA3""5 and 1,000.5 units.", "In 1990. Then 1,5 \xE2\x80\x93 done \xF0\x9F\x98\x80", "a+b = c, x < y > z \xC2\xB1""1"}}, [] { ChrfOptions o; o.word_order = 2; return o; }(), 73.75025548060779, "chrF2++|nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:{version} = 73.75"},
      {"references shorter than the n-gram order", {"a cat sat", "the dog barked loudly"}, {{"cat", "the dog barked"}}, [] { ChrfOptions o; return o; }(), 86.72623478964769, "chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:{version} = 86.73"},
      {"only empty hypotheses", {"", ""}, {{"a reference", "another one"}}, [] { ChrfOptions o; return o; }(), 0.0, "chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:{version} = 0.00"},
      {"sentence-level line 1", {"The cat sat on the mat."}, {{"The cat is sitting on the mat."}, {"The cat sat on a mat."}}, [] { ChrfOptions o; o.word_order = 2; return o; }(), 72.65910428863748, "chrF2++|nrefs:2|case:mixed|eff:yes|nc:6|nw:2|space:no|version:{version} = 72.66"},
      {"sentence-level line 2", {"It costs $1,000.50 (approx.), or 1.000,5 EUR."}, {{"It costs $1,000.50 (about), or 1.000,5 EUR."}, {"It costs about $1,000.50, or 1.000,5 EUR."}}, [] { ChrfOptions o; o.word_order = 2; return o; }(), 81.27051833602586, "chrF2++|nrefs:2|case:mixed|eff:yes|nc:6|nw:2|space:no|version:{version} = 81.27"},
      {"sentence-level line 3", {"Pages 10-20 describe a 3-year-old well-known case."}, {{"Pages 10-20 describe a well-known case of a 3-year-old."}, {""}}, [] { ChrfOptions o; o.word_order = 2; return o; }(), 79.85178963951557, "chrF2++|nrefs:2|case:mixed|eff:yes|nc:6|nw:2|space:no|version:{version} = 79.85"},
      {"sentence-level line 4", {"&quot;Quoted&quot; text &amp; more &lt;tags&gt; <skipped> here."}, {{"\"Quoted\" text & more <tags> here."}, {"\"Quoted\" text and more <tags> here."}}, [] { ChrfOptions o; o.word_order = 2; return o; }(), 39.8882349637476, "chrF2++|nrefs:2|case:mixed|eff:yes|nc:6|nw:2|space:no|version:{version} = 39.89"},
      {"sentence-level line 5", {"He said: \"Don't do it!\""}, {{"He said: \"Do not do it!\""}, {"He said: \"Don't do that!\""}}, [] { ChrfOptions o; o.word_order = 2; return o; }(), 76.08829528303644, "chrF2++|nrefs:2|case:mixed|eff:yes|nc:6|nw:2|space:no|version:{version} = 76.09"},
      {"sentence-level line 6", {""}, {{"Nothing was translated here."}, {"Nothing here."}}, [] { ChrfOptions o; o.word_order = 2; return o; }(), 0.0, "chrF2++|nrefs:2|case:mixed|eff:yes|nc:6|nw:2|space:no|version:{version} = 0.00"},
      {"sentence-level line 7", {"In 2019, growth was 3.5% - the highest."}, {{"In 2019, growth was 3.5%, the highest."}, {"Growth was 3.5% in 2019 - the highest."}}, [] { ChrfOptions o; o.word_order = 2; return o; }(), 83.79784359865494, "chrF2++|nrefs:2|case:mixed|eff:yes|nc:6|nw:2|space:no|version:{version} = 83.80"},
  };
  return cases;
}

TEST(Chrf, MatchesSacrebleuOnTrickyCases) {
  for (const auto& c : chrf_golden_cases()) {
    SCOPED_TRACE(c.name);
    const ChrfScore s = corpus_chrf(c.hypotheses, c.references, c.options);
    EXPECT_NEAR(s.score, c.score, 1e-9);
    EXPECT_EQ(format_score_line(chrf_report(s, c.options), 2, false), chrf_with_version(c.line));
  }
}

TEST(Chrf, NameAndSignature) {
  ChrfOptions options;
  EXPECT_EQ(chrf_name(options), "chrF2");
  options.word_order = 2;
  options.beta = 3;
  options.eps_smoothing = true;
  options.whitespace = true;
  EXPECT_EQ(chrf_name(options), "chrF3++");
  EXPECT_EQ(format_signature(chrf_signature(options, 3), true),
            "#:3|c:mixed|e:no|nc:6|nw:2|s:yes|v:" + signature_version());
}

TEST(Chrf, RejectsBadOptionsAndCorpora) {
  ChrfOptions options;
  options.char_order = 0;
  EXPECT_THROW(corpus_chrf({"a"}, {{"a"}}, options), Error);
  options = {};
  options.beta = -1;
  EXPECT_THROW(corpus_chrf({"a"}, {{"a"}}, options), Error);
  EXPECT_THROW(corpus_chrf({"a", "b"}, {{"a"}}, {}), Error);
}

// An empty reference has no n-grams, so its segment counts no hypothesis n-grams either
// (sacreBLEU's _get_match_statistics): sacreBLEU 2.6 gives 100 for {"a", "b"} against {"a", ""}
// and 0 for "a" against "".
TEST(Chrf, EmptyReferencesAddNothing) {
  EXPECT_DOUBLE_EQ(corpus_chrf({"a", "b"}, {{"a", ""}}, {}).score, 100.0);
  EXPECT_EQ(corpus_chrf({"a", "b"}, {{"a", ""}}, {}).num_refs, 1);
  EXPECT_DOUBLE_EQ(corpus_chrf({"a"}, {{""}}, {}).score, 0.0);
}

}  // namespace
}  // namespace mixseq
