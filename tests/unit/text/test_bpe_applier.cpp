#include "mixseq/text/bpe_applier.h"

#include <gtest/gtest.h>

#include <random>

#include "mixseq/text/bpe_learner.h"
#include "mixseq/util/error.h"
#include "test_support.h"

namespace mixseq {
namespace {

using test::error_of;

// Codes learnt from Sennrich et al. 2016's example (see test_bpe_learner.cpp): s t</w>, e st</w>,
// l o, w est</w>, n e, ne west</w>, lo w</w>, w i, wi d, wid est</w>.
BpeCodes sennrich_codes() {
  WordCounts words;
  words.add("low", 5);
  words.add("lower", 2);
  words.add("newest", 6);
  words.add("widest", 3);
  BpeLearnOptions options;
  options.symbols = 10;
  return learn_bpe(words, options);
}

std::string apply_text(const BpeApplier& applier, const std::string& text) {
  test::TempDir dir;
  applier.apply_file(dir.write("in.txt", text), dir.path("out.txt"));
  return dir.read("out.txt");
}


TEST(BpeApplier, SegmentsWordsByMergePriority) {
  const BpeApplier applier(sennrich_codes(), BpeApplyOptions{});
  // lowest: l o w e s t</w> -> st</w> -> est</w> -> lo -> west</w>; (lo, west</w>) is no merge.
  EXPECT_EQ(applier.segment_word("lowest"), (std::vector<std::string>{"lo@@", "west"}));
  EXPECT_EQ(applier.segment_word("newer"), (std::vector<std::string>{"ne@@", "w@@", "e@@", "r"}));
  EXPECT_EQ(applier.segment_word("widest"), (std::vector<std::string>{"widest"}));
}

TEST(BpeApplier, KeepsLineEndsAndOuterWhitespaceAndDropsInnerDoubleSpaces) {
  const BpeApplier applier(sennrich_codes(), BpeApplyOptions{});
  EXPECT_EQ(apply_text(applier, "  lowest  newer \r\n\n   \nwidest"),
            "  lo@@ west ne@@ w@@ e@@ r \r\n\n   \nwidest");  // no "\n" at the end, as in the input
}

TEST(BpeApplier, WordsHoldingTheSeparatorOrEndMarkerAreSegmentedLikeAnyOther) {
  const BpeApplier applier(BpeCodes({{"@", "@"}, {"<", "/"}, {"</", "w"}, {"</w", "></w>"}}), BpeApplyOptions{});
  // Expected values printed by apply_bpe.py with these codes.
  EXPECT_EQ(applier.segment_word("a@@b"), (std::vector<std::string>{"a@@", "@@@@", "b"}));
  // "x</w>": the last symbol "></w>" merges into "</w></w>"; printing drops one "</w>".
  EXPECT_EQ(applier.segment_word("x</w>"), (std::vector<std::string>{"x@@", "</w>"}));
}

TEST(BpeApplier, VersionZeroOneCodesTreatTheEndMarkerAsASymbol) {
  const BpeApplier applier(BpeCodes({{"s", "</w>"}, {"e", "s</w>"}}, BpeCodes::Version::k0_1), BpeApplyOptions{});
  EXPECT_EQ(applier.segment_word("les"), (std::vector<std::string>{"l@@", "es"}));
}

TEST(BpeApplier, VocabularySplitsBackUnknownPieces) {
  test::TempDir dir;
  BpeApplyOptions options;
  options.vocabulary = dir.write("vocab", "lo@@ 5\nw@@ 3\nest 3\n");
  // "west" is unknown: undo w est</w> -> "w" (known as "w@@") and "est" (known, word-final).
  EXPECT_EQ(BpeApplier(sennrich_codes(), options).segment_word("lowest"),
            (std::vector<std::string>{"lo@@", "w@@", "est"}));
  // Threshold 4 keeps only "lo@@": est</w> -> e st</w> -> s t</w>, down to characters.
  options.vocabulary_threshold = 4;
  EXPECT_EQ(BpeApplier(sennrich_codes(), options).segment_word("lowest"),
            (std::vector<std::string>{"lo@@", "w@@", "e@@", "s@@", "t"}));
  // A threshold that leaves nothing disables the filter, as apply_bpe.py's "if vocab:" does.
  options.vocabulary_threshold = 100;
  EXPECT_EQ(BpeApplier(sennrich_codes(), options).segment_word("lowest"), (std::vector<std::string>{"lo@@", "west"}));
}

TEST(BpeApplier, SplittingBackUndoesTheMergeApplyBpePyPicksAmongDuplicates) {
  // "abc" is made by "a bc" (lines 2 and 5) and "ab c" (line 4). bpe_codes_reverse keeps the pair
  // whose last occurrence comes first: "ab c". Expected output printed by apply_bpe.py.
  test::TempDir dir;
  BpeApplyOptions options;
  options.vocabulary = dir.write("vocab", "ab@@ 1\nc@@ 1\nx 1\n");
  const BpeApplier applier(BpeCodes({{"b", "c"}, {"a", "bc"}, {"a", "b"}, {"ab", "c"}, {"a", "bc"}}), options);
  EXPECT_EQ(applier.segment_word("abcx"), (std::vector<std::string>{"ab@@", "c@@", "x"}));
}

TEST(BpeApplier, GlossariesIsolateMatchesAndKeepThemWhole) {
  BpeApplyOptions options;
  options.glossaries = {"USA", "like", "<country>\\w*</country>"};
  const BpeApplier applier(BpeCodes({}), options);  // no merges: other parts fall apart into characters
  // subword-nmt's test_glossaries.py: '1934USABUSA' -> ['1934', 'USA', 'B', 'USA'].
  EXPECT_EQ(applier.segment_word("1934USABUSA"),
            (std::vector<std::string>{"1@@", "9@@", "3@@", "4@@", "USA@@", "B@@", "USA"}));
  // 'likeword' -> ['like', 'word'] (apply_bpe.py 0.3.9 would keep only 'w' of the ending).
  EXPECT_EQ(applier.segment_word("likeword"), (std::vector<std::string>{"like@@", "w@@", "o@@", "r@@", "d"}));
  EXPECT_EQ(applier.segment_word("<country>Schweiz</country>"),
            (std::vector<std::string>{"<country>Schweiz</country>"}));
}

TEST(BpeApplier, MalformedUtf8NamesFileAndLine) {
  test::TempDir dir;
  const BpeApplier applier(sennrich_codes(), BpeApplyOptions{});
  const auto input = dir.write("in.txt", "lowest\nne\xFFwer\n");
  EXPECT_NE(error_of([&] { applier.apply_file(input, dir.path("out.txt")); })
                .find(input + ":2: malformed UTF-8 at byte 3"),
            std::string::npos);
}

TEST(BpeApplier, BadVocabularyLineNamesFileAndLine) {
  test::TempDir dir;
  BpeApplyOptions options;
  options.vocabulary = dir.write("vocab", "lo@@ 5\nw@@\n");
  EXPECT_NE(error_of([&] { BpeApplier(sennrich_codes(), options); }).find(options.vocabulary + ":2:"),
            std::string::npos);
}

// A corpus of random words from a fixed seed: frequent and rare words, some non-ASCII.
std::string random_corpus(size_t lines) {
  std::mt19937 random(7);
  const std::vector<std::string> letters = {"a", "e", "i", "n", "r", "s", "t", "l", "\xC3\xA4", "\xC3\x9F", "x"};
  std::vector<std::string> words;
  for (int i = 0; i < 3000; ++i) {
    std::string word;
    for (size_t n = 1 + random() % 9; n > 0; --n) word += letters[random() % letters.size()];
    words.push_back(word);
  }
  std::string text;
  for (size_t line = 0; line < lines; ++line) {
    for (size_t n = 1 + random() % 12; n > 0; --n) {
      const size_t rank = std::min<size_t>(words.size() - 1, random() % 30 * (random() % 100));  // Zipf-like
      text += words[rank] + (n > 1 ? " " : "");
    }
    text += '\n';
  }
  return text;
}

TEST(BpeApplier, ThreadsGiveTheSingleThreadedOutput) {
  test::TempDir dir;
  const auto corpus = dir.write("corpus.txt", random_corpus(30000));
  BpeLearnOptions learn;
  learn.symbols = 500;
  const BpeCodes codes = learn_bpe(count_words({corpus}), learn);
  BpeApplyOptions options;
  options.glossaries = {"x+"};
  options.threads = 1;
  BpeApplier(codes, options).apply_file(corpus, dir.path("one.txt"));
  options.threads = 4;
  BpeApplier(codes, options).apply_file(corpus, dir.path("four.txt"));
  EXPECT_EQ(dir.read("one.txt"), dir.read("four.txt"));
  EXPECT_NE(dir.read("one.txt"), dir.read("corpus.txt"));
}

TEST(BpeApplier, RemovingTheSeparatorGivesTheInputBack) {
  test::TempDir dir;
  const std::string text = random_corpus(2000);
  const auto corpus = dir.write("corpus.txt", text);
  BpeLearnOptions learn;
  learn.symbols = 200;
  const BpeApplier applier(learn_bpe(count_words({corpus}), learn), BpeApplyOptions{});
  applier.apply_file(corpus, dir.path("bpe.txt"));
  std::string segmented = dir.read("bpe.txt"), restored;
  for (size_t i = 0; i < segmented.size(); ++i) {  // sed -r 's/(@@ )|(@@ ?$)//g'
    if (segmented.compare(i, 3, "@@ ") == 0) {
      i += 2;
      continue;
    }
    restored += segmented[i];
  }
  EXPECT_NE(segmented, text);
  EXPECT_EQ(restored, text);
}

}  // namespace
}  // namespace mixseq
