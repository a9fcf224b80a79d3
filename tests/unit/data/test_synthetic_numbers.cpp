#include "mixseq/data/synthetic_numbers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "mixseq/util/error.h"
#include "test_support.h"

namespace mixseq {
namespace {

TEST(NumberWords, EnglishMatchesHandWrittenExamples) {
  EXPECT_EQ(english_number_words(0), "zero");
  EXPECT_EQ(english_number_words(13), "thirteen");
  EXPECT_EQ(english_number_words(40), "forty");
  EXPECT_EQ(english_number_words(321), "three hundred twenty-one");
  EXPECT_EQ(english_number_words(1000), "one thousand");
  EXPECT_EQ(english_number_words(100005), "one hundred thousand five");
  EXPECT_EQ(english_number_words(999999), "nine hundred ninety-nine thousand nine hundred ninety-nine");
}

TEST(NumberWords, GermanMatchesHandWrittenExamples) {
  EXPECT_EQ(german_number_words(0), "null");
  EXPECT_EQ(german_number_words(1), "eins");
  EXPECT_EQ(german_number_words(16), "sechzehn");
  EXPECT_EQ(german_number_words(17), "siebzehn");
  EXPECT_EQ(german_number_words(21), "einundzwanzig");
  EXPECT_EQ(german_number_words(30), "dreißig");
  EXPECT_EQ(german_number_words(101), "einhunderteins");
  EXPECT_EQ(german_number_words(321), "dreihunderteinundzwanzig");
  EXPECT_EQ(german_number_words(1001), "eintausendeins");
  EXPECT_EQ(german_number_words(21000), "einundzwanzigtausend");
  EXPECT_EQ(german_number_words(201201), "zweihunderteintausendzweihunderteins");
  EXPECT_EQ(german_number_words(999999), "neunhundertneunundneunzigtausendneunhundertneunundneunzig");
  EXPECT_THROW(german_number_words(1000000), Error);
}

TEST(NumberTask, SplitsAreFixedBySeedAndDisjoint) {
  NumberTaskOptions options;
  options.train_size = 300, options.valid_size = 50, options.test_size = 50;
  const auto a = make_number_task(options);
  const auto b = make_number_task(options);
  EXPECT_EQ(a.train.source, b.train.source);
  EXPECT_EQ(a.test.target, b.test.target);
  ASSERT_EQ(a.train.source.size(), 300u);
  ASSERT_EQ(a.valid.target.size(), 50u);
  std::set<std::string> train(a.train.source.begin(), a.train.source.end());
  EXPECT_EQ(train.size(), 300u);
  for (const auto& s : a.test.source) EXPECT_EQ(train.count(s), 0u) << s;
  for (const auto& s : a.valid.source) EXPECT_EQ(train.count(s), 0u) << s;

  options.seed = 2;
  EXPECT_NE(make_number_task(options).train.source, a.train.source);
}

// `synth --train-size -5` wrote a short validation split with exit 0 (issue 11); 99,999,999,999
// ended in a bare std::bad_alloc.
TEST(NumberTask, SizesOutOfRangeAreErrors) {
  NumberTaskOptions options;
  options.train_size = -5;
  EXPECT_EQ(test::error_of([&] { make_number_task(options); }), "number task: train_size (-5) must be in 0..10000000");
  options.train_size = 0;
  options.test_size = 10'000'001;
  EXPECT_EQ(test::error_of([&] { make_number_task(options); }),
            "number task: test_size (10000001) must be in 0..10000000");
}

TEST(NumberTask, TargetsTranslateSourcesNumberByNumber) {
  NumberTaskOptions options;
  options.train_size = 200, options.valid_size = 0, options.test_size = 0;
  const auto corpus = make_number_task(options);
  for (size_t i = 0; i < corpus.train.source.size(); ++i) {
    const auto& src = corpus.train.source[i];
    const auto& tgt = corpus.train.target[i];
    // as many ", " separators on each side
    EXPECT_EQ(std::count(src.begin(), src.end(), ','), std::count(tgt.begin(), tgt.end(), ','));
  }
}

}  // namespace
}  // namespace mixseq
