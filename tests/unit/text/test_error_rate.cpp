#include "mixseq/text/error_rate.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mixseq/util/error.h"

namespace mixseq {
namespace {

ErrorCounts counts(int64_t c, int64_t s, int64_t d, int64_t i) { return {c, s, d, i}; }

ErrorCounts word_counts(const std::string& hypothesis, const std::string& reference, ErrorRateOptions options = {}) {
  return utterance_errors(hypothesis, reference, options).counts;
}

ErrorCounts char_counts(const std::string& hypothesis, const std::string& reference) {
  ErrorRateOptions options;
  options.unit = ErrorRateUnit::kCharacter;
  return utterance_errors(hypothesis, reference, options).counts;
}

std::string ops(const std::vector<AlignmentStep>& alignment) {
  std::string out;
  for (const auto& step : alignment) out += static_cast<char>(step.op);
  return out;
}

TEST(ErrorRate, IdenticalTextHasNoErrors) {
  EXPECT_EQ(word_counts("the cat sat", "the cat sat"), counts(3, 0, 0, 0));
  EXPECT_EQ(error_rate(counts(3, 0, 0, 0)), 0.0);
}

// An empty hypothesis deletes every reference word: WER 100.
TEST(ErrorRate, EmptyHypothesisIsAllDeletions) {
  const ErrorCounts c = word_counts("", "a b c");
  EXPECT_EQ(c, counts(0, 0, 3, 0));
  EXPECT_EQ(error_rate(c), 100.0);
  EXPECT_EQ(word_counts("   ", "a b c"), counts(0, 0, 3, 0));  // whitespace only is empty too
}

// An empty reference has N = 0: every hypothesis word is an insertion and the utterance's rate is
// undefined (sclite's UNDEF); in a corpus its insertions still count against the other words.
TEST(ErrorRate, EmptyReferenceIsAllInsertionsAndUndefinedAlone) {
  const ErrorCounts c = word_counts("a b", "");
  EXPECT_EQ(c, counts(0, 0, 0, 2));
  EXPECT_EQ(c.reference_length(), 0);
  EXPECT_FALSE(error_rate(c).has_value());
  EXPECT_FALSE(error_rate(word_counts("", "")).has_value());

  const CorpusErrors corpus = corpus_error_rate({"a b", "x"}, {"", "x"}, {});
  EXPECT_EQ(corpus.counts, counts(1, 0, 0, 2));
  EXPECT_EQ(corpus.rate, 200.0);  // (0 + 0 + 2) / 1
  ASSERT_EQ(corpus.utterances.size(), 2u);
  EXPECT_EQ(corpus.utterances[0], counts(0, 0, 0, 2));
  EXPECT_EQ(corpus.utterances[1], counts(1, 0, 0, 0));
}

// Insertions alone push WER over 100: 3 insertions against 2 reference words is 150 %.
TEST(ErrorRate, InsertionsOnly) {
  const UtteranceErrors u = utterance_errors("x a y b z", "a b", {});
  EXPECT_EQ(u.counts, counts(2, 0, 0, 3));
  EXPECT_EQ(ops(u.alignment), "ICICI");
  EXPECT_EQ(error_rate(u.counts), 150.0);
}

// A substitution (4) is cheaper than a deletion plus an insertion (3 + 3).
TEST(ErrorRate, SubstitutionBeatsDeletionPlusInsertion) {
  const UtteranceErrors u = utterance_errors("a x c", "a b c", {});
  EXPECT_EQ(ops(u.alignment), "CSC");
  EXPECT_EQ(u.counts, counts(2, 1, 0, 0));
}

// Reference "a x y", hypothesis "z w a": three substitutions cost 3 * 4 = 12, and so do two
// insertions, a correct "a" and two deletions (2 * 3 + 0 + 2 * 3). sclite takes the diagonal on
// ties, so S = 3 (WER 100), not D = I = 2 (WER 133.33); `sclite -s -o pralign` prints
// "Scores: (#C #S #D #I) 0 3 0 0" for this pair.
TEST(ErrorRate, EqualCostTieTakesSubstitutionsAsSclite) {
  const UtteranceErrors u = utterance_errors("z w a", "a x y", {});
  EXPECT_EQ(ops(u.alignment), "SSS");
  EXPECT_EQ(u.counts, counts(0, 3, 0, 0));
  EXPECT_EQ(error_rate(u.counts), 100.0);
}

// Reference "a b", hypothesis "b a": a deletion, a correct word and an insertion (cost 6) beat two
// substitutions (8). Two such alignments cost 6, "D C I" and "I C D"; at the last cell the
// deletion and the insertion tie and sclite takes the insertion, giving (sclite -o pralign):
//   REF:  a b *
//   HYP:  * b a
TEST(ErrorRate, DeletionInsertionTieTakesInsertionAsSclite) {
  const UtteranceErrors u = utterance_errors("b a", "a b", {});
  EXPECT_EQ(ops(u.alignment), "DCI");
  EXPECT_EQ(u.counts, counts(1, 0, 1, 1));
  EXPECT_EQ(format_alignment(u), (std::vector<std::string>{"REF:  a b *", "HYP:  * b a", "Eval: D   I"}));
}

// Deleting "on" at the end costs as much as deleting "cat"; the back trace from the last cell
// takes the diagonal there, so the deletion lands early, as `sclite -o pralign` shows it.
TEST(ErrorRate, AlignmentIndices) {
  const std::vector<AlignmentStep> steps = align_tokens({"the", "big", "mat"}, {"the", "cat", "sat", "on"});
  ASSERT_EQ(ops(steps), "CDSS");
  EXPECT_EQ(steps[1].hypothesis_index, -1);
  EXPECT_EQ(steps[1].reference_index, 1);
  EXPECT_EQ(steps[3].hypothesis_index, 2);
  EXPECT_EQ(steps[3].reference_index, 3);
  EXPECT_TRUE(align_tokens({}, {}).empty());
}

// CER aligns the code points of the words; spaces are not characters (sclite -c -e utf-8).
TEST(ErrorRate, CharactersAreCodePointsWithoutSpaces) {
  EXPECT_EQ(char_counts("anob", "añob"), counts(3, 1, 0, 0));          // ñ is one character of 2 bytes
  EXPECT_EQ(char_counts("日本", "日本語"), counts(2, 0, 1, 0));          // 3-byte characters
  EXPECT_EQ(char_counts("a bc", "ab c"), counts(3, 0, 0, 0));          // a moved space is no error
  EXPECT_EQ(char_counts("hello", ""), counts(0, 0, 0, 5));
  EXPECT_EQ(char_counts("", "wörld"), counts(0, 0, 5, 0));
  EXPECT_EQ(char_counts("e\xCC\x81", "\xC3\xA9"), counts(0, 1, 0, 1));  // e + U+0301 is two code points
  ErrorRateOptions options;
  options.unit = ErrorRateUnit::kCharacter;
  EXPECT_EQ(error_rate_tokens(" ñu  日 ", options), (std::vector<std::string>{"ñ", "u", "日"}));
  const CorpusErrors corpus = corpus_error_rate({"hallo wörd"}, {"hello wörld"}, options);
  EXPECT_EQ(corpus.counts, counts(8, 1, 1, 0));
  EXPECT_EQ(corpus.rate, 20.0);
}

TEST(ErrorRate, WordsSplitOnUnicodeWhitespace) {
  EXPECT_EQ(error_rate_tokens("a\tb\u3000c  d\n", {}), (std::vector<std::string>{"a", "b", "c", "d"}));
}

TEST(ErrorRate, LowercaseAndPunctuationAreOffByDefault) {
  EXPECT_EQ(word_counts("hello world", "Hello, World!"), counts(0, 2, 0, 0));
  ErrorRateOptions options;
  options.lowercase = true;
  EXPECT_EQ(word_counts("hello world", "Hello, World!", options), counts(0, 2, 0, 0));  // "hello," != "hello"
  options.remove_punctuation = true;
  EXPECT_EQ(word_counts("hello world", "Hello, World!", options), counts(2, 0, 0, 0));
  // A word of punctuation alone disappears; symbols are not punctuation; apostrophes go.
  EXPECT_EQ(error_rate_tokens("Don't -- pay $5 ¿sí?", options), (std::vector<std::string>{"dont", "pay", "$5", "sí"}));
  options.lowercase = false;
  EXPECT_EQ(error_rate_tokens("ÉTÉ, Σ.", options), (std::vector<std::string>{"ÉTÉ", "Σ"}));
  options.lowercase = true;
  EXPECT_EQ(error_rate_tokens("ÉTÉ", options), (std::vector<std::string>{"été"}));
}

TEST(ErrorRate, CorpusSumsCountsBeforeDividing) {
  // Utterance rates 100 % (1 word) and 0 % (3 words): the corpus rate is 1 / 4, not their mean.
  const CorpusErrors corpus = corpus_error_rate({"x", "a b c"}, {"y", "a b c"}, {});
  EXPECT_EQ(corpus.counts, counts(3, 1, 0, 0));
  EXPECT_EQ(corpus.rate, 25.0);
}

TEST(ErrorRate, RateIsSclitesPercentage) {
  const ErrorCounts c = counts(110, 10, 3, 2);  // N = 123, errors 15
  EXPECT_EQ(*error_rate(c), 15.0 / 123.0 * 100.0);
}

TEST(ErrorRate, Errors) {
  EXPECT_THROW(corpus_error_rate({"a", "b"}, {"a"}, {}), Error);
  EXPECT_THROW(utterance_errors("a \xFF", "a", {}), Error);
  EXPECT_THROW(utterance_errors("a", "\xC3", {}), Error);
}

TEST(ErrorRate, FormatAlignmentPadsColumns) {
  const UtteranceErrors u = utterance_errors("the big mat", "the cat sat on", {});
  EXPECT_EQ(format_alignment(u), (std::vector<std::string>{"REF:  the cat sat on", "HYP:  the *** big mat",
                                                           "Eval:     D   S   S"}));
  const UtteranceErrors wide = utterance_errors("wörld", "", {});
  EXPECT_EQ(format_alignment(wide), (std::vector<std::string>{"REF:  *****", "HYP:  wörld", "Eval: I"}));
  EXPECT_EQ(format_alignment(utterance_errors("", "", {})), (std::vector<std::string>{"REF:", "HYP:", "Eval:"}));
}

std::vector<std::pair<std::string, int64_t>> listed(const std::vector<TokenCount>& list) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const auto& entry : list) out.emplace_back(entry.token, entry.count);
  return out;
}

// The example sclite -o dtl was run on by hand (SCTK 2.4.10): the second line's alignment has a
// tie, which sclite breaks as "eight *** two two six / eight four four six six" (an insertion
// first, then two -> four and two -> six), so "six" is a confusion, not an insertion.
TEST(ErrorTally, ListsWhatSclitesDetailedReportLists) {
  ErrorTally tally;
  const std::vector<std::string> hypotheses = {"four seven four", "eight four four six six", ""};
  const std::vector<std::string> references = {"two seven four", "eight two two six", "three"};
  for (size_t i = 0; i < hypotheses.size(); ++i) tally.add(utterance_errors(hypotheses[i], references[i], {}));
  const auto pairs = tally.confusion_pairs();
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0].reference, "two");
  EXPECT_EQ(pairs[0].hypothesis, "four");
  EXPECT_EQ(pairs[0].count, 2);
  EXPECT_EQ(pairs[1].reference, "two");
  EXPECT_EQ(pairs[1].hypothesis, "six");
  EXPECT_EQ(pairs[1].count, 1);
  using List = std::vector<std::pair<std::string, int64_t>>;
  EXPECT_EQ(listed(tally.insertions()), (List{{"four", 1}}));
  EXPECT_EQ(listed(tally.deletions()), (List{{"three", 1}}));
  EXPECT_EQ(listed(tally.substitutions()), (List{{"two", 3}}));
  EXPECT_EQ(listed(tally.falsely_recognized()), (List{{"four", 2}, {"six", 1}}));
}

TEST(ErrorTally, MostFrequentFirstThenByteOrder) {
  ErrorTally tally;
  // Deleted once each: "b", "a", "B", "é" (2 bytes, after ASCII), "a" again.
  tally.add(utterance_errors("", "b a B é a", {}));
  using List = std::vector<std::pair<std::string, int64_t>>;
  EXPECT_EQ(listed(tally.deletions()), (List{{"a", 2}, {"B", 1}, {"b", 1}, {"é", 1}}));
  EXPECT_TRUE(tally.insertions().empty());
  EXPECT_TRUE(tally.confusion_pairs().empty());
  // Characters: the tally counts whatever the alignment's tokens are.
  ErrorRateOptions characters;
  characters.unit = ErrorRateUnit::kCharacter;
  ErrorTally chars;
  chars.add(utterance_errors("cot", "cat", characters));
  ASSERT_EQ(chars.confusion_pairs().size(), 1u);
  EXPECT_EQ(chars.confusion_pairs()[0].reference, "a");
  EXPECT_EQ(chars.confusion_pairs()[0].hypothesis, "o");
}

}  // namespace
}  // namespace mixseq
