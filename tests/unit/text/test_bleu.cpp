#include "mixseq/text/bleu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "mixseq/util/error.h"

namespace mixseq {
namespace {

// "{version}" in an expected line stands for signature_version().
std::string with_version(std::string line) {
  const std::string placeholder = "{version}";
  return line.replace(line.find(placeholder), placeholder.size(), signature_version());
}

// Hand-worked example (Papineni et al. 2002, with sacreBLEU's exp smoothing):
//   hypothesis "the cat sat on the mat", reference "the cat is on the mat", 6 tokens each.
//   1-grams: the x2, cat, on, mat match, sat does not      -> 5/6
//   2-grams: "the cat", "on the", "the mat" of 5           -> 3/5
//   3-grams: "on the mat" of 4                             -> 1/4
//   4-grams: none of 3; exp smoothing gives the first order without matches 1/(2*3)
//   BP = 1 (equal lengths); BLEU = 100 * (5/6 * 3/5 * 1/4 * 1/6)^(1/4) = 100 * 48^(-1/4) = 37.9918
TEST(Bleu, HandWorkedExampleWithExpSmoothing) {
  const BleuScore s = corpus_bleu({"the cat sat on the mat"}, {{"the cat is on the mat"}}, {});
  EXPECT_NEAR(s.score, 100.0 * std::pow(48.0, -0.25), 1e-12);
  EXPECT_EQ(s.counts, (std::array<int64_t, 4>{5, 3, 1, 0}));
  EXPECT_EQ(s.totals, (std::array<int64_t, 4>{6, 5, 4, 3}));
  EXPECT_NEAR(s.precisions[3], 100.0 / 6.0, 1e-12);
  EXPECT_EQ(s.bp, 1.0);
  EXPECT_EQ(s.sys_len, 6);
  EXPECT_EQ(s.ref_len, 6);
  EXPECT_EQ(format_score_line(bleu_report(s, {}), 4, false),
            "BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:" + signature_version() +
                " = 37.9918 83.3/60.0/25.0/16.7 (BP = 1.000 ratio = 1.000 hyp_len = 6 ref_len = 6)");
}

// The same segment under the other smoothing methods (Chen & Cherry 2014):
//   floor 0.1: p4 = 0.1/3        -> 100 * (5/6 * 3/5 * 1/4 * 1/30)^(1/4) = 100 * 240^(-1/4)
//   add-k 1:   p2..p4 = (c+1)/(t+1) = 4/6, 2/5, 1/4 -> 100 * (5/6 * 4/6 * 2/5 * 1/4)^(1/4) = 100 * 18^(-1/4)
//   none:      log(0) is floored to -9999999999, so BLEU is 0
TEST(Bleu, HandWorkedExampleWithOtherSmoothing) {
  const std::vector<std::string> hyp = {"the cat sat on the mat"};
  const std::vector<std::vector<std::string>> ref = {{"the cat is on the mat"}};
  BleuOptions options;
  options.smoothing = BleuSmoothing::kFloor;
  EXPECT_NEAR(corpus_bleu(hyp, ref, options).score, 100.0 * std::pow(240.0, -0.25), 1e-12);
  options.smoothing = BleuSmoothing::kAddK;
  const BleuScore add_k = corpus_bleu(hyp, ref, options);
  EXPECT_NEAR(add_k.score, 100.0 * std::pow(18.0, -0.25), 1e-12);
  EXPECT_EQ(add_k.counts[1], 3);  // reported before adding k
  options.smoothing = BleuSmoothing::kNone;
  EXPECT_EQ(corpus_bleu(hyp, ref, options).score, 0.0);
}

// Brevity penalty and closest reference length: hypothesis "a b c" (3 tokens), references of
// 4 and 6 tokens -> ref_len 4, BP = exp(1 - 4/3). All its n-grams match, but it has no 4-gram:
//   corpus BLEU averages over 4 orders and the missing one zeroes it;
//   with effective order (sentence-level) the average is over orders 1..3, so BLEU = 100 * BP.
TEST(Bleu, BrevityPenaltyClosestReferenceAndEffectiveOrder) {
  BleuOptions options;
  const BleuScore corpus = corpus_bleu({"a b c"}, {{"a b c d"}, {"a b c d e f"}}, options);
  EXPECT_EQ(corpus.ref_len, 4);
  EXPECT_NEAR(corpus.bp, std::exp(1.0 - 4.0 / 3.0), 1e-15);
  EXPECT_EQ(corpus.score, 0.0);
  options.effective_order = true;
  const BleuScore sentence = sentence_bleu("a b c", {"a b c d", "a b c d e f"}, options);
  EXPECT_NEAR(sentence.score, 100.0 * std::exp(1.0 - 4.0 / 3.0), 1e-12);
  EXPECT_EQ(sentence.num_refs, 2);
  // A tie between reference lengths 4 and 6 for a 5-token hypothesis goes to the shorter.
  EXPECT_EQ(corpus_bleu({"a b c d e"}, {{"a b c d e f"}, {"a b c d"}}, options).ref_len, 4);
}

struct BleuGolden {
  std::string name;
  std::vector<std::string> hypotheses;
  std::vector<std::vector<std::string>> references;
  BleuOptions options;
  double score;      // sacreBLEU's BLEUScore.score
  std::string line;  // sacreBLEU's text line with -w 2
};

// Expected values from sacreBLEU 2.x's BLEU (rebuilt from its source, Python 3.11):
// BLEU(**options).corpus_score(hypotheses, references), printed with width 2.
// Sentence-level cases are one-segment corpora with effective order, which is what
// BLEU.sentence_score computes and what sacreBLEU's --sentence-level uses.
const std::vector<BleuGolden>& golden_cases() {
  static const std::vector<BleuGolden> cases = {
      {"punctuation, numbers, dashes, entities, an empty line", {"The cat sat on the mat.", "It costs $1,000.50 (approx.), or 1.000,5 EUR.", "Pages 10-20 describe a 3-year-old well-known case.", "&quot;Quoted&quot; text &amp; more &lt;tags&gt; <skipped> here.", "He said: \"Don't do it!\"", "", "In 2019, growth was 3.5% - the highest."}, {{"The cat is sitting on the mat.", "It costs $1,000.50 (about), or 1.000,5 EUR.", "Pages 10-20 describe a well-known case of a 3-year-old.", "\"Quoted\" text & more <tags> here.", "He said: \"Do not do it!\"", "Nothing was translated here.", "In 2019, growth was 3.5%, the highest."}}, [] { BleuOptions o; return o; }(), 63.142382771378486, "BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:{version} = 63.14 92.1/80.7/66.7/53.3 (BP = 0.881 ratio = 0.887 hyp_len = 63 ref_len = 71)"},
      {"two references, one missing for a line", {"The cat sat on the mat.", "It costs $1,000.50 (approx.), or 1.000,5 EUR.", "Pages 10-20 describe a 3-year-old well-known case.", "&quot;Quoted&quot; text &amp; more &lt;tags&gt; <skipped> here.", "He said: \"Don't do it!\"", "", "In 2019, growth was 3.5% - the highest."}, {{"The cat is sitting on the mat.", "It costs $1,000.50 (about), or 1.000,5 EUR.", "Pages 10-20 describe a well-known case of a 3-year-old.", "\"Quoted\" text & more <tags> here.", "He said: \"Do not do it!\"", "Nothing was translated here.", "In 2019, growth was 3.5%, the highest."}, {"The cat sat on a mat.", "It costs about $1,000.50, or 1.000,5 EUR.", "", "\"Quoted\" text and more <tags> here.", "He said: \"Don't do that!\"", "Nothing here.", "Growth was 3.5% in 2019 - the highest."}}, [] { BleuOptions o; return o; }(), 75.19810315360607, "BLEU|nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:{version} = 75.20 96.8/89.5/76.5/62.2 (BP = 0.938 ratio = 0.940 hyp_len = 63 ref_len = 67)"},
      {"lowercase with Unicode case mappings", {"THE CAT sat ON the Mat.", "Hello World, \xCE\x9F\xCE\x94\xCE\x9F\xCE\xA3.", "\xC4\xB0stanbul is BIG."}, {{"The cat sat on the mat.", "hello world, \xCE\xBF\xCE\xB4\xCE\xBF\xCF\x82.", "i\xCC\x87stanbul is big."}}, [] { BleuOptions o; o.lowercase = true; return o; }(), 100.00000000000004, "BLEU|nrefs:1|case:lc|eff:no|tok:13a|smooth:exp|version:{version} = 100.00 100.0/100.0/100.0/100.0 (BP = 1.000 ratio = 1.000 hyp_len = 16 ref_len = 16)"},
      {"same, case-sensitive", {"THE CAT sat ON the Mat.", "Hello World, \xCE\x9F\xCE\x94\xCE\x9F\xCE\xA3.", "\xC4\xB0stanbul is BIG."}, {{"The cat sat on the mat.", "hello world, \xCE\xBF\xCE\xB4\xCE\xBF\xCF\x82.", "i\xCC\x87stanbul is big."}}, [] { BleuOptions o; return o; }(), 5.235271063024785, "BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:{version} = 5.24 43.8/3.8/2.5/1.8 (BP = 1.000 ratio = 1.000 hyp_len = 16 ref_len = 16)"},
      {"no 4-gram match, smooth exp", {"the quick fox jumped over a lazy dog", "one two three four five"}, {{"the fox quick jumped over the dog lazy", "one two four three six five"}}, [] { BleuOptions o; return o; }(), 12.508461584656379, "BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:{version} = 12.51 92.3/18.2/5.6/3.6 (BP = 0.926 ratio = 0.929 hyp_len = 13 ref_len = 14)"},
      {"no 4-gram match, smooth floor", {"the quick fox jumped over a lazy dog", "one two three four five"}, {{"the fox quick jumped over the dog lazy", "one two four three six five"}}, [] { BleuOptions o; o.smoothing = BleuSmoothing::kFloor; return o; }(), 6.652369992277204, "BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:floor[0.10]|version:{version} = 6.65 92.3/18.2/1.1/1.4 (BP = 0.926 ratio = 0.929 hyp_len = 13 ref_len = 14)"},
      {"no 4-gram match, smooth floor 0.05", {"the quick fox jumped over a lazy dog", "one two three four five"}, {{"the fox quick jumped over the dog lazy", "one two four three six five"}}, [] { BleuOptions o; o.smoothing = BleuSmoothing::kFloor; o.smooth_value = 0.05; return o; }(), 4.703935932501111, "BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:floor[0.05]|version:{version} = 4.70 92.3/18.2/0.6/0.7 (BP = 0.926 ratio = 0.929 hyp_len = 13 ref_len = 14)"},
      {"no 4-gram match, smooth add-k", {"the quick fox jumped over a lazy dog", "one two three four five"}, {{"the fox quick jumped over the dog lazy", "one two four three six five"}}, [] { BleuOptions o; o.smoothing = BleuSmoothing::kAddK; return o; }(), 21.459258483877576, "BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:add-k[1.00]|version:{version} = 21.46 92.3/25.0/10.0/12.5 (BP = 0.926 ratio = 0.929 hyp_len = 13 ref_len = 14)"},
      {"no 4-gram match, smooth add-k 0.5", {"the quick fox jumped over a lazy dog", "one two three four five"}, {{"the fox quick jumped over the dog lazy", "one two four three six five"}}, [] { BleuOptions o; o.smoothing = BleuSmoothing::kAddK; o.smooth_value = 0.5; return o; }(), 15.083479336602162, "BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:add-k[0.50]|version:{version} = 15.08 92.3/21.7/5.3/6.7 (BP = 0.926 ratio = 0.929 hyp_len = 13 ref_len = 14)"},
      {"no 4-gram match, smooth none", {"the quick fox jumped over a lazy dog", "one two three four five"}, {{"the fox quick jumped over the dog lazy", "one two four three six five"}}, [] { BleuOptions o; o.smoothing = BleuSmoothing::kNone; return o; }(), 0.0, "BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:none|version:{version} = 0.00 92.3/18.2/0.0/0.0 (BP = 0.926 ratio = 0.929 hyp_len = 13 ref_len = 14)"},
      {"no match at all", {"completely different"}, {{"nothing in common here"}}, [] { BleuOptions o; return o; }(), 0.0, "BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:{version} = 0.00 0.0/0.0/0.0/0.0 (BP = 0.368 ratio = 0.500 hyp_len = 2 ref_len = 4)"},
      {"only empty hypotheses", {"", ""}, {{"a reference", "another one"}}, [] { BleuOptions o; return o; }(), 0.0, "BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:{version} = 0.00 0.0/0.0/0.0/0.0 (BP = 0.000 ratio = 0.000 hyp_len = 0 ref_len = 4)"},
      {"short hypotheses: brevity penalty", {"a b c", "x y"}, {{"a b c d e f", "x y z w"}}, [] { BleuOptions o; return o; }(), 0.0, "BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:{version} = 0.00 100.0/100.0/100.0/0.0 (BP = 0.368 ratio = 0.500 hyp_len = 5 ref_len = 10)"},
      {"intl: Unicode punctuation and symbols", {"\xC2\xAB""Bonjour\xC2\xBB, dit-il\xE2\x80\xA6 \xC2\xBFQu\xC3\xA9? \xC2\xA1S\xC3\xAD!", "Price: 5\xE2\x82\xAC, \xC2\xA3""5 and 1,000.5 units.", "In 1990. Then 1,5 \xE2\x80\x94 done \xF0\x9F\x98\x80", "a+b=c, x<y>z \xC2\xB1""1"}, {{"\xC2\xAB Bonjour \xC2\xBB, dit-il... \xC2\xBFQu\xC3\xA9? \xC2\xA1S\xC3\xAD!", "Price: 5 \xE2\x82\xAC, \xC2\xA3""5 and 1,000.5 units.", "In 1990. Then 1,5 \xE2\x80\x93 done \xF0\x9F\x98\x80", "a+b = c, x < y > z \xC2\xB1""1"}}, [] { BleuOptions o; o.tokenizer = BleuTokenizer::kIntl; return o; }(), 83.50985434088366, "BLEU|nrefs:1|case:mixed|eff:no|tok:intl|smooth:exp|version:{version} = 83.51 95.7/90.5/84.2/79.4 (BP = 0.957 ratio = 0.958 hyp_len = 46 ref_len = 48)"},
      {"13a on the same Unicode text", {"\xC2\xAB""Bonjour\xC2\xBB, dit-il\xE2\x80\xA6 \xC2\xBFQu\xC3\xA9? \xC2\xA1S\xC3\xAD!", "Price: 5\xE2\x82\xAC, \xC2\xA3""5 and 1,000.5 units.", "In 1990. Then 1,5 \xE2\x80\x94 done \xF0\x9F\x98\x80", "a+b=c, x<y>z \xC2\xB1""1"}, {{"\xC2\xAB Bonjour \xC2\xBB, dit-il... \xC2\xBFQu\xC3\xA9? \xC2\xA1S\xC3\xAD!", "Price: 5 \xE2\x82\xAC, \xC2\xA3""5 and 1,000.5 units.", "In 1990. Then 1,5 \xE2\x80\x93 done \xF0\x9F\x98\x80", "a+b = c, x < y > z \xC2\xB1""1"}}, [] { BleuOptions o; return o; }(), 62.35852873737503, "BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:{version} = 62.36 88.9/78.1/67.9/62.5 (BP = 0.846 ratio = 0.857 hyp_len = 36 ref_len = 42)"},
      {"char: CJK", {"\xE6\x88\x91\xE5\x96\x9C\xE6\xAC\xA2\xE5\x90\x83\xE8\x8B\xB9\xE6\x9E\x9C\xE3\x80\x82", "\xE4\xBB\x8A\xE5\xA4\xA9\xE5\xA4\xA9\xE6\xB0\x94\xE5\xBE\x88\xE5\xA5\xBD\xEF\xBC\x81", "\xE6\x9D\xB1\xE4\xBA\xAC\xE3\x81\xAF\xE6\x97\xA5\xE6\x9C\xAC\xE3\x81\xAE\xE9\xA6\x96\xE9\x83\xBD\xE3\x81\xA7\xE3\x81\x99\xE3\x80\x82"}, {{"\xE6\x88\x91\xE5\xBE\x88\xE5\x96\x9C\xE6\xAC\xA2\xE5\x90\x83\xE8\x8B\xB9\xE6\x9E\x9C\xE3\x80\x82", "\xE4\xBB\x8A\xE5\xA4\xA9\xE7\x9A\x84\xE5\xA4\xA9\xE6\xB0\x94\xE5\xBE\x88\xE5\xA5\xBD\xEF\xBC\x81", "\xE6\x97\xA5\xE6\x9C\xAC\xE3\x81\xAE\xE9\xA6\x96\xE9\x83\xBD\xE3\x81\xAF\xE6\x9D\xB1\xE4\xBA\xAC\xE3\x81\xA7\xE3\x81\x99\xE3\x80\x82"}}, [] { BleuOptions o; o.tokenizer = BleuTokenizer::kChar; return o; }(), 61.399846722541284, "BLEU|nrefs:1|case:mixed|eff:no|tok:char|smooth:exp|version:{version} = 61.40 100.0/77.3/57.9/43.8 (BP = 0.923 ratio = 0.926 hyp_len = 25 ref_len = 27)"},
      {"none: whitespace tokens only", {"The cat sat on the mat.", "It costs $1,000.50 (approx.), or 1.000,5 EUR.", "Pages 10-20 describe a 3-year-old well-known case.", "&quot;Quoted&quot; text &amp; more &lt;tags&gt; <skipped> here.", "He said: \"Don't do it!\"", "", "In 2019, growth was 3.5% - the highest."}, {{"The cat is sitting on the mat.", "It costs $1,000.50 (about), or 1.000,5 EUR.", "Pages 10-20 describe a well-known case of a 3-year-old.", "\"Quoted\" text & more <tags> here.", "He said: \"Do not do it!\"", "Nothing was translated here.", "In 2019, growth was 3.5%, the highest."}}, [] { BleuOptions o; o.tokenizer = BleuTokenizer::kNone; return o; }(), 25.540972333412906, "BLEU|nrefs:1|case:mixed|eff:no|tok:none|smooth:exp|version:{version} = 25.54 72.5/47.1/25.0/9.1 (BP = 0.861 ratio = 0.870 hyp_len = 40 ref_len = 46)"},
      {"sentence-level line 1", {"The cat sat on the mat."}, {{"The cat is sitting on the mat."}, {"The cat sat on a mat."}}, [] { BleuOptions o; o.effective_order = true; return o; }(), 79.52707287670508, "BLEU|nrefs:2|case:mixed|eff:yes|tok:13a|smooth:exp|version:{version} = 79.53 100.0/100.0/80.0/50.0 (BP = 1.000 ratio = 1.000 hyp_len = 7 ref_len = 7)"},
      {"sentence-level line 2", {"It costs $1,000.50 (approx.), or 1.000,5 EUR."}, {{"It costs $1,000.50 (about), or 1.000,5 EUR."}, {"It costs about $1,000.50, or 1.000,5 EUR."}}, [] { BleuOptions o; o.effective_order = true; return o; }(), 67.03420896351791, "BLEU|nrefs:2|case:mixed|eff:yes|tok:13a|smooth:exp|version:{version} = 67.03 84.6/75.0/63.6/50.0 (BP = 1.000 ratio = 1.083 hyp_len = 13 ref_len = 12)"},
      {"sentence-level line 3", {"Pages 10-20 describe a 3-year-old well-known case."}, {{"Pages 10-20 describe a well-known case of a 3-year-old."}, {""}}, [] { BleuOptions o; o.effective_order = true; return o; }(), 57.85251258538566, "BLEU|nrefs:2|case:mixed|eff:yes|tok:13a|smooth:exp|version:{version} = 57.85 100.0/81.8/60.0/44.4 (BP = 0.846 ratio = 0.857 hyp_len = 12 ref_len = 14)"},
      {"sentence-level line 4", {"&quot;Quoted&quot; text &amp; more &lt;tags&gt; <skipped> here."}, {{"\"Quoted\" text & more <tags> here."}, {"\"Quoted\" text and more <tags> here."}}, [] { BleuOptions o; o.effective_order = true; return o; }(), 100.00000000000004, "BLEU|nrefs:2|case:mixed|eff:yes|tok:13a|smooth:exp|version:{version} = 100.00 100.0/100.0/100.0/100.0 (BP = 1.000 ratio = 1.000 hyp_len = 11 ref_len = 11)"},
      {"sentence-level line 5", {"He said: \"Don't do it!\""}, {{"He said: \"Do not do it!\""}, {"He said: \"Don't do that!\""}}, [] { BleuOptions o; o.effective_order = true; return o; }(), 86.94417438899828, "BLEU|nrefs:2|case:mixed|eff:yes|tok:13a|smooth:exp|version:{version} = 86.94 100.0/100.0/85.7/66.7 (BP = 1.000 ratio = 1.000 hyp_len = 9 ref_len = 9)"},
      {"sentence-level line 6", {""}, {{"Nothing was translated here."}, {"Nothing here."}}, [] { BleuOptions o; o.effective_order = true; return o; }(), 0.0, "BLEU|nrefs:2|case:mixed|eff:yes|tok:13a|smooth:exp|version:{version} = 0.00 0.0/0.0/0.0/0.0 (BP = 0.000 ratio = 0.000 hyp_len = 0 ref_len = 3)"},
      {"sentence-level line 7", {"In 2019, growth was 3.5% - the highest."}, {{"In 2019, growth was 3.5%, the highest."}, {"Growth was 3.5% in 2019 - the highest."}}, [] { BleuOptions o; o.effective_order = true; return o; }(), 81.32882808488928, "BLEU|nrefs:2|case:mixed|eff:yes|tok:13a|smooth:exp|version:{version} = 81.33 100.0/90.0/77.8/62.5 (BP = 1.000 ratio = 1.000 hyp_len = 11 ref_len = 11)"},
      {"sentence-level, short", {"x y"}, {{"x y z w"}}, [] { BleuOptions o; o.effective_order = true; return o; }(), 36.78794411714425, "BLEU|nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|version:{version} = 36.79 100.0/100.0/0.0/0.0 (BP = 0.368 ratio = 0.500 hyp_len = 2 ref_len = 4)"},
  };
  return cases;
}

TEST(Bleu, MatchesSacrebleuOnTrickyCases) {
  for (const auto& c : golden_cases()) {
    SCOPED_TRACE(c.name);
    const BleuScore s = corpus_bleu(c.hypotheses, c.references, c.options);
    EXPECT_NEAR(s.score, c.score, 1e-9);
    EXPECT_EQ(format_score_line(bleu_report(s, c.options), 2, false), with_version(c.line));
  }
}

TEST(Bleu, SignatureNamesEveryOption) {
  BleuOptions options;
  options.tokenizer = BleuTokenizer::kIntl;
  options.lowercase = true;
  options.smoothing = BleuSmoothing::kAddK;
  options.effective_order = true;
  EXPECT_EQ(format_signature(bleu_signature(options, 2), false),
            "nrefs:2|case:lc|eff:yes|tok:intl|smooth:add-k[1.00]|version:" + signature_version());
  options.smooth_value = 0.25;
  EXPECT_EQ(format_signature(bleu_signature(options, 3), true),
            "#:3|c:lc|e:yes|tok:intl|s:add-k[0.25]|v:" + signature_version());
  options.smoothing = BleuSmoothing::kExp;  // exp takes no value, so none is shown
  EXPECT_EQ(format_signature(bleu_signature(options, 1), false),
            "nrefs:1|case:lc|eff:yes|tok:intl|smooth:exp|version:" + signature_version());
}

TEST(Bleu, SmoothingNames) {
  for (auto smoothing : {BleuSmoothing::kNone, BleuSmoothing::kFloor, BleuSmoothing::kAddK, BleuSmoothing::kExp})
    EXPECT_EQ(parse_bleu_smoothing(bleu_smoothing_name(smoothing)), smoothing);
  try {
    parse_bleu_smoothing("add-n");
    FAIL() << "expected mixseq::Error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "unknown BLEU smoothing method 'add-n'; known: none, floor, add-k, exp");
  }
}

TEST(Bleu, RejectsMalformedCorpora) {
  EXPECT_THROW(corpus_bleu({}, {{}}, {}), Error);
  EXPECT_THROW(corpus_bleu({"a"}, {}, {}), Error);
  try {
    corpus_bleu({"a", "b"}, {{"a", "b"}, {"a"}}, {});
    FAIL() << "expected mixseq::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("reference stream 2 has 1 segments but there are 2 hypotheses"),
              std::string::npos) << e.what();
  }
}

// sacreBLEU 2.2 and later ("allow empty references") keep an empty reference: it counts in nrefs
// and its length 0 can be the closest. sacreBLEU 2.6 printed these lines.
TEST(Bleu, EmptyReferencesCountAsReferencesOfLengthZero) {
  const auto line = [](const BleuScore& s, const BleuOptions& o) { return format_score_line(bleu_report(s, o), 2, false); };
  EXPECT_EQ(line(corpus_bleu({"a", "b"}, {{"a", ""}, {"a", ""}}, {}), {}),
            "BLEU|nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:" + signature_version() +
                " = 0.00 50.0/0.0/0.0/0.0 (BP = 1.000 ratio = 2.000 hyp_len = 2 ref_len = 1)");
}

}  // namespace
}  // namespace mixseq
