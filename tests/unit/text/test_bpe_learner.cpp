#include "mixseq/text/bpe_learner.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace mixseq {
namespace {

// The example vocabulary of Sennrich et al. 2016, section 3.2 (Figure 1 / Algorithm 1).
WordCounts sennrich_vocabulary() {
  WordCounts words;
  words.add("low", 5);
  words.add("lower", 2);
  words.add("newest", 6);
  words.add("widest", 3);
  return words;
}

std::string codes_text(const BpeCodes& codes) {
  test::TempDir dir;
  codes.save(dir.path("codes"));
  return dir.read("codes");
}

// Worked by hand. Symbols: l o w</w> (5), l o w e r</w> (2), n e w e s t</w> (6), w i d e s t</w> (3).
//  1. (e s)=9 and (s t</w>)=9 tie; Python's max takes the larger tuple: "s t</w>".
//  2. (e st</w>)=9.   3. (l o)=7.
//  4. (w est</w>), (n e), (e w) all 6: "w" > "n" > "e", so "w est</w>" (newest: n e west</w>).
//  5. (n e)=6 beats (e west</w>)=6.   6. (ne west</w>)=6.   7. (lo w</w>)=5.
//  8. (w i), (i d), (d est</w>) all 3: "w i".   9. (wi d) beats (d est</w>).   10. (wid est</w>)=3.
// 11-13. lower's pairs, 2 each: (w e), then (we r</w>) over (lo we), then (lo wer</w>); then no pairs remain.
TEST(BpeLearner, LearnsTheSennrichExampleMergeByMerge) {
  BpeLearnOptions options;
  options.symbols = 100;
  EXPECT_EQ(codes_text(learn_bpe(sennrich_vocabulary(), options)),
            "#version: 0.2\n"
            "s t</w>\ne st</w>\nl o\nw est</w>\nn e\nne west</w>\nlo w</w>\nw i\nwi d\nwid est</w>\n"
            "w e\nwe r</w>\nlo wer</w>\n");
}

TEST(BpeLearner, StopsAtTheSymbolBudgetOrMinimumFrequency) {
  BpeLearnOptions options;
  options.symbols = 4;
  EXPECT_EQ(learn_bpe(sennrich_vocabulary(), options).merges().size(), 4u);
  options.symbols = 100;
  options.min_frequency = 3;  // after merge 10 the best pair occurs twice
  const auto codes = learn_bpe(sennrich_vocabulary(), options);
  ASSERT_EQ(codes.merges().size(), 10u);
  EXPECT_EQ(codes.merges().back().left, "wid");
}

TEST(BpeLearner, TotalSymbolsSubtractsTheCharacters) {
  // Word-internal characters l o w e n s i d (8) and word-final w</w> r</w> t</w> (3): 15 - 11 = 4 merges.
  BpeLearnOptions options;
  options.symbols = 15;
  options.total_symbols = true;
  EXPECT_EQ(learn_bpe(sennrich_vocabulary(), options).merges().size(), 4u);
}

TEST(BpeLearner, MergesInsideWordsWithTabsFollowTheReferenceRegex) {
  // learn_bpe.py merges with re.sub(r'(?<!\S)a\ b(?!\S)', 'ab', ' '.join(symbols)): after the tab
  // in the symbol "\ta" the pattern matches inside it, so "\ta b x a b x</w>" becomes
  // "\tab x ab x</w>". Its statistics then keep pairs that no longer exist, and it learns "b x" and
  // "\ta b" at the end. Expected codes printed by learn_bpe.py -s 14 on this text.
  test::TempDir dir;
  const auto path = dir.write("tabs.txt",
                              "\tac \tac \tac \tac \tac \tad \tad \tad \tad \tad \tae \tae \tae \tae \tae\n"
                              "\tabxabx \tabxabx \tabxabx \tabxabx\n"
                              "abq abq abq abq abq abq abq abq abq abq\n");
  BpeLearnOptions options;
  options.symbols = 14;
  EXPECT_EQ(codes_text(learn_bpe(count_words({path}), options)),
            "#version: 0.2\n\t a\na b\nab q</w>\n\ta e</w>\n\ta d</w>\n\ta c</w>\nx ab\nxab x</w>\nb x\n"
            "\tab xabx</w>\n\ta b\n");
}

TEST(BpeLearner, NothingToLearnGivesOnlyTheHeader) {
  WordCounts words;
  words.add("a", 3);
  EXPECT_EQ(codes_text(learn_bpe(words, BpeLearnOptions{})), "#version: 0.2\n");
}

}  // namespace
}  // namespace mixseq
