// Byte-for-byte comparison with subword-nmt 0.3.9. The *.ref files in tests/data/bpe were written
// by its scripts (make_golden.sh there says how) from train.txt, train2.txt, dict.txt and test.txt,
// small texts with the cases that separate implementations: tied pair counts, non-ASCII, double and
// leading/trailing spaces, empty and blank lines, a CRLF line, a form feed, tabs and no-break
// spaces inside words, words holding "@@", "</w>", backslashes and parentheses, and a last line
// without "\n".
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "mixseq/text/bpe_applier.h"
#include "mixseq/text/bpe_learner.h"
#include "test_support.h"

namespace mixseq {
namespace {

const std::string kDataDir = std::string(MIXSEQ_TEST_DATA_DIR) + "/bpe/";

std::string data(const std::string& name) { return kDataDir + name; }

std::string reference(const std::string& name) {
  std::ifstream in(data(name), std::ios::binary);
  EXPECT_TRUE(in.is_open()) << data(name);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string learnt_codes(const WordCounts& words, int64_t symbols, int64_t min_frequency = 2,
                         bool total_symbols = false) {
  BpeLearnOptions options;
  options.symbols = symbols;
  options.min_frequency = min_frequency;
  options.total_symbols = total_symbols;
  test::TempDir dir;
  learn_bpe(words, options).save(dir.path("codes"));
  return dir.read("codes");
}

std::string applied(const std::string& codes, const BpeApplyOptions& options, int64_t merges = -1) {
  test::TempDir dir;
  BpeApplier(BpeCodes::load(data(codes), merges), options).apply_file(data("test.txt"), dir.path("out"));
  return dir.read("out");
}

TEST(BpeGolden, LearnMatchesLearnBpePy) {
  const WordCounts train = count_words({data("train.txt")});
  EXPECT_EQ(learnt_codes(train, 100), reference("codes.ref"));                           // -s 100
  EXPECT_EQ(learnt_codes(train, 100, 2, true), reference("codes_total.ref"));            // -s 100 --total-symbols
  EXPECT_EQ(learnt_codes(train, 300, 6), reference("codes_min6.ref"));                   // --min-frequency 6
  EXPECT_EQ(learnt_codes(WordCounts::load(data("dict.txt")), 100), reference("codes_dict.ref"));  // --dict-input
}

TEST(BpeGolden, LearnKeepsThePrunedStatisticsBookkeeping) {
  // prune.txt's codes change from merge 21 on if prune_stats overwrote the full count of a pruned
  // pair with its negative change instead of adding the change.
  EXPECT_EQ(learnt_codes(count_words({data("prune.txt")}), 400), reference("codes_prune.ref"));
}

TEST(BpeGolden, JointLearningAndVocabulariesMatchLearnJointBpeAndVocabPy) {
  const std::string codes = learnt_codes(count_words({data("train.txt"), data("train2.txt")}), 300);
  EXPECT_EQ(codes, reference("codes_joint.ref"));
  test::TempDir dir;
  const BpeApplier applier(BpeCodes::load(dir.write("codes", codes)), BpeApplyOptions{});
  applier.count_output_words(data("train.txt")).save(dir.path("vocab1"));
  applier.count_output_words(data("train2.txt")).save(dir.path("vocab2"));
  EXPECT_EQ(dir.read("vocab1"), reference("vocab_train.ref"));
  EXPECT_EQ(dir.read("vocab2"), reference("vocab_train2.ref"));
}

TEST(BpeGolden, ApplyMatchesApplyBpePy) {
  EXPECT_EQ(applied("codes.ref", {}), reference("test.bpe.ref"));
  EXPECT_EQ(applied("codes.ref", {}, 40), reference("test_merges40.bpe.ref"));  // --merges 40
  BpeApplyOptions separator;
  separator.separator = "##";
  EXPECT_EQ(applied("codes.ref", separator), reference("test_separator.bpe.ref"));
}

TEST(BpeGolden, VocabularyFilterMatchesApplyBpePy) {
  BpeApplyOptions options;
  options.vocabulary = data("vocab_train2.ref");
  options.vocabulary_threshold = 2;
  EXPECT_EQ(applied("codes_joint.ref", options), reference("test_vocab2.bpe.ref"));
}

TEST(BpeGolden, GlossariesMatchApplyBpePy) {
  BpeApplyOptions options;
  options.glossaries = {"USA", "<tag>\\w*</tag>", "\\d+", "like"};
  EXPECT_EQ(applied("codes.ref", options), reference("test_glossaries.bpe.ref"));
}

}  // namespace
}  // namespace mixseq
