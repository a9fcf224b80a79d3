// ARPA language models: reading, Katz backoff scores computed by hand, malformed files named by
// file and line, and the scores of Debian's irstlm (compile-lm) on a model irstlm built itself.
#include "mixseq/text/arpa_language_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <sstream>

#include "mixseq/util/error.h"
#include "test_support.h"

namespace mixseq {
namespace {

// A trigram model written by hand (probabilities need not normalise for these checks).
constexpr const char* kTrigram = R"(some tool's header before \data\ is skipped

\data\
ngram 1=6
ngram  2=	4
ngram 3=2

\1-grams:
-1.0	<unk>
-99	<s>	-0.5
-0.7	</s>
-0.6	a	-0.3
-0.8  b  -0.2
-0.9	c

\2-grams:
-0.2	<s> a	-0.1
-0.4	a b	-0.25
-0.3	b c
-0.5	b </s>

\3-grams:
-0.05	<s> a b
-0.15	a b c

\end\
)";

double score(const ArpaLanguageModel& lm, const std::vector<std::string>& history, const std::string& word) {
  std::vector<ArpaLanguageModel::WordId> ids;
  for (const auto& w : history) ids.push_back(lm.word_id(w));
  return lm.log10_prob(ids, lm.word_id(word));
}

TEST(ArpaLanguageModel, ReadsCountsAndVocabulary) {
  const auto lm = ArpaLanguageModel::from_text(kTrigram, "hand.arpa");
  EXPECT_EQ(lm.order(), 3);
  EXPECT_EQ(lm.ngram_count(1), 6);
  EXPECT_EQ(lm.ngram_count(2), 4);
  EXPECT_EQ(lm.ngram_count(3), 2);
  EXPECT_EQ(lm.vocabulary_size(), 6);
  EXPECT_EQ(lm.word(lm.begin_sentence_id()), "<s>");
  EXPECT_EQ(lm.word(lm.end_sentence_id()), "</s>");
  EXPECT_TRUE(lm.contains("a"));
  EXPECT_FALSE(lm.contains("zzz"));
  EXPECT_EQ(lm.word_id("zzz"), lm.word_id("<unk>"));
}

TEST(ArpaLanguageModel, ScoresWithKatzBackoffAsComputedByHand) {
  const auto lm = ArpaLanguageModel::from_text(kTrigram, "hand.arpa");
  EXPECT_NEAR(score(lm, {}, "a"), -0.6, 1e-6);                // unigram
  EXPECT_NEAR(score(lm, {"<s>"}, "a"), -0.2, 1e-6);           // bigram
  EXPECT_NEAR(score(lm, {"<s>", "a"}, "b"), -0.05, 1e-6);     // trigram
  EXPECT_NEAR(score(lm, {"a", "b"}, "c"), -0.15, 1e-6);       // trigram
  // "b c </s>", "c </s>" unlisted; bow("b c") and bow("c") are absent (0): p(</s>).
  EXPECT_NEAR(score(lm, {"b", "c"}, "</s>"), -0.7, 1e-6);
  // "a b a", "b a" unlisted: bow("a b") + bow("b") + p(a) = -0.25 - 0.2 - 0.6.
  EXPECT_NEAR(score(lm, {"a", "b"}, "a"), -1.05, 1e-6);
  // "a b </s>" unlisted, "b </s>" listed: bow("a b") + p(</s> | b) = -0.25 - 0.5.
  EXPECT_NEAR(score(lm, {"a", "b"}, "</s>"), -0.75, 1e-6);
  // "<s> b" is no context: "b c" alone.
  EXPECT_NEAR(score(lm, {"<s>", "b"}, "c"), -0.3, 1e-6);
  // Only the last N-1 = 2 words of a history count.
  EXPECT_NEAR(score(lm, {"c", "b", "<s>", "a"}, "b"), -0.05, 1e-6);
  // Unknown words are <unk>: "a <unk>" unlisted: bow(a) + p(<unk>); in a history, "<unk> a b" unlisted,
  // "<unk> a" unlisted (no backoff): p(b | a).
  EXPECT_NEAR(score(lm, {"a"}, "zzz"), -0.3 - 1.0, 1e-6);
  EXPECT_NEAR(score(lm, {"zzz", "a"}, "b"), -0.4, 1e-6);
  // A sentence: p(a|<s>) p(b|<s> a) p(c|a b) p(</s>|b c).
  EXPECT_NEAR(lm.sentence_log10_prob({"a", "b", "c"}), -0.2 - 0.05 - 0.15 - 0.7, 1e-6);
  EXPECT_NEAR(lm.sentence_log10_prob({"a", "b", "c"}, /*end_of_sentence=*/false), -0.4, 1e-6);
}

TEST(ArpaLanguageModel, UnknownWordsWithoutUnkGetTheFloor) {
  const auto lm = ArpaLanguageModel::from_text(
      "\\data\\\nngram 1=2\nngram 2=1\n\\1-grams:\n-0.3 a -0.1\n-0.5 b\n\\2-grams:\n-0.2 a b\n\\end\\\n", "tiny.arpa");
  EXPECT_EQ(lm.word_id("zzz"), ArpaLanguageModel::kNoWord);
  EXPECT_EQ(lm.begin_sentence_id(), ArpaLanguageModel::kNoWord);
  EXPECT_NEAR(score(lm, {"a"}, "zzz"), kArpaMissingUnknownLog10Prob, 1e-9);
  EXPECT_NEAR(score(lm, {"a"}, "b"), -0.2, 1e-6);
  EXPECT_NEAR(score(lm, {"zzz"}, "b"), -0.5, 1e-6);  // an unknown history matches nothing
  EXPECT_NEAR(score(lm, {"b"}, "a"), -0.3, 1e-6);    // b has no backoff weight
}

TEST(ArpaLanguageModel, ReadsGzipFilesAndNamesMissingOnes) {
  test::TempDir dir;
  const std::string plain = dir.write("lm.arpa", kTrigram);
  ASSERT_EQ(std::system(("gzip -k " + plain).c_str()), 0);
  const auto lm = ArpaLanguageModel::load(plain + ".gz");
  EXPECT_NEAR(score(lm, {"a", "b"}, "c"), -0.15, 1e-6);
  EXPECT_NE(test::error_of([&] { ArpaLanguageModel::load(dir.path("none.arpa")); }).find("none.arpa"),
            std::string::npos);
}

// Each malformed file: the error names the file and the line, and says what is wrong.
TEST(ArpaLanguageModel, MalformedFilesNameFileAndLine) {
  const std::string counts = "\\data\\\nngram 1=2\nngram 2=1\n\n";
  const std::string unigrams = "\\1-grams:\n-0.3\ta\t-0.1\n-0.5\tb\n\n";
  const std::string bigrams = "\\2-grams:\n-0.2\ta b\n\n";
  const struct {
    std::string text;
    std::string expected;
  } cases[] = {
      {"no header\n", "bad.arpa:1: not an ARPA language model: no \\data\\ line"},
      {"\\data\\\nngram 1=x\n", "bad.arpa:2: expected a count line \"ngram N=COUNT\""},
      {"\\data\\\nngram 1=-3\n", "bad.arpa:2: expected a count line"},
      {"\\data\\\nngram 2=3\n", "bad.arpa:2: counts out of order: \"ngram 2=\" where \"ngram 1=\" was expected"},
      {"\\data\\\n\\1-grams:\n", "bad.arpa:2: \\data\\ lists no \"ngram N=COUNT\" lines"},
      {"\\data\\\nngram 1=0\n\n\\1-grams:\n\n\\end\\\n",
       "bad.arpa:2: \\data\\ declares no 1-grams (\"ngram 1=0\"): a language model with no words"},
      {counts + "\\2-grams:\n", "bad.arpa:5: expected \"\\1-grams:\", found \"\\2-grams:\""},
      {counts + "\\1-grams:\n-0.3 a -0.1 x\n", "bad.arpa:6: a 1-gram line has 4 fields; expected 2 or 3"},
      {counts + unigrams + "\\2-grams:\n-0.2 a b -0.1\n", "bad.arpa:10: a 2-gram line has 4 fields; expected 3 (log10"},
      {counts + "\\1-grams:\n-0.3x a\n", "bad.arpa:6: the log10 probability \"-0.3x\" is not a number"},
      {counts + "\\1-grams:\nnan a\n", "bad.arpa:6: the log10 probability \"nan\" is not a number"},
      {counts + "\\1-grams:\n0.5 a\n", "bad.arpa:6: the log10 probability 0.5 is above 0"},
      {counts + "\\1-grams:\n-0.3 a zero\n", "bad.arpa:6: the log10 backoff weight \"zero\" is not a finite number"},
      {counts + "\\1-grams:\n-0.3 a\n-0.3 a\n", "bad.arpa:7: repeated 1-gram \"a\""},
      {counts + "\\1-grams:\n-0.3 a\n-0.3 b\n-0.3 c\n", "bad.arpa:8: more 1-grams than the 2 that \\data\\ declares"},
      {counts + "\\1-grams:\n-0.3 a\n\\2-grams:\n", "bad.arpa:7: the \\1-grams: section has 1 entries, but \\data\\ declares 2"},
      {counts + unigrams + "\\2-grams:\n-0.2 a c\n", "bad.arpa:10: the word \"c\" of this 2-gram is not among the 1-grams"},
      {"\\data\\\nngram 1=2\nngram 2=2\n\n" + unigrams + "\\2-grams:\n-0.2 a b\n-0.1 a   b\n",
       "bad.arpa:11: repeated 2-gram \"a   b\""},
      {counts + unigrams, "bad.arpa:8: missing \\2-grams: section (the file ends)"},
      {counts + unigrams + bigrams, "bad.arpa:11: missing \\end\\ (the file ends after the \\2-grams: section)"},
      {counts + unigrams + bigrams + "\\3-grams:\n", "bad.arpa:12: expected \\end\\ after the \\2-grams: section"},
  };
  for (const auto& c : cases) {
    const std::string message = test::error_of([&] { ArpaLanguageModel::from_text(c.text, "bad.arpa"); });
    EXPECT_NE(message.find(c.expected), std::string::npos) << "text:\n" << c.text << "\nmessage: " << message;
  }
  // Well formed: the same pieces with \end\.
  EXPECT_EQ(test::error_of([&] { ArpaLanguageModel::from_text(counts + unigrams + bigrams + "\\end\\\n", "ok.arpa"); }),
            "");
}

// irstlm (Debian's package; scripts/setup.sh installs it) builds a trigram model from a corpus;
// compile-lm scores n-grams of new sentences. Its --score mode prints each full-order n-gram's
// natural-log probability as a hex float; --eval prints the text's total log10 probability (2 decimals).
class Irstlm : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists("/usr/lib/irstlm/bin/build-lm.sh") || std::system("command -v irstlm >/dev/null") != 0)
      GTEST_SKIP() << "irstlm is not installed (apt-get install irstlm; scripts/setup.sh does)";
  }
  int run(const std::string& command) {
    return std::system(("cd '" + dir.root().string() + "' && (" + command + ") >>log.txt 2>&1").c_str());
  }
  test::TempDir dir;
};

TEST_F(Irstlm, ScoresEqualCompileLm) {
  // A corpus from a small grammar, so that n-grams repeat and others back off.
  std::mt19937 rng(25);
  const std::vector<std::string> vocab = {"one", "two", "three", "four", "five", "six", "seven", "oh", "nine"};
  auto sentence = [&](int words) {
    std::string s;
    std::string previous = "one";
    for (int i = 0; i < words; ++i) {
      // A word follows its predecessor in the list two times in three, else any word.
      std::string w = rng() % 3 ? vocab[(std::find(vocab.begin(), vocab.end(), previous) - vocab.begin() + 1) %
                                        vocab.size()]
                                : vocab[rng() % vocab.size()];
      s += (i ? " " : "") + w;
      previous = w;
    }
    return s;
  };
  std::string corpus, test_text;
  std::vector<std::vector<std::string>> tests;
  for (int i = 0; i < 300; ++i) corpus += sentence(2 + static_cast<int>(rng() % 6)) + "\n";
  for (int i = 0; i < 40; ++i) {
    const std::string s = sentence(1 + static_cast<int>(rng() % 7));
    test_text += s + "\n";
    std::istringstream words(s);
    tests.emplace_back();
    for (std::string w; words >> w;) tests.back().push_back(w);
  }
  dir.write("corpus.txt", corpus);
  dir.write("test.txt", test_text);
  ASSERT_EQ(run("irstlm add-start-end <corpus.txt >corpus.se && irstlm add-start-end <test.txt >test.se && "
                "irstlm build-lm -i corpus.se -n 3 -k 1 -t tmp -o lm.ilm.gz && "
                "irstlm compile-lm lm.ilm.gz --text=yes lm.arpa"),
            0)
      << dir.read("log.txt");
  const auto lm = ArpaLanguageModel::load(dir.path("lm.arpa"));
  ASSERT_EQ(lm.order(), 3);

  // Every trigram of "<s> w_1 ... w_n </s>": compile-lm --score reads its input as one stream of
  // words, restarting at each <s>, and scores each word that has two words before it.
  std::vector<double> ours;
  for (const auto& words : tests) {
    std::vector<std::string> s = {"<s>"};
    s.insert(s.end(), words.begin(), words.end());
    s.push_back("</s>");
    for (size_t i = 2; i < s.size(); ++i) ours.push_back(score(lm, {s[i - 2], s[i - 1]}, s[i]));
  }
  ASSERT_EQ(run("irstlm compile-lm lm.arpa --score=yes <test.se >scores.txt"), 0) << dir.read("log.txt");
  std::istringstream scores(dir.read("scores.txt"));
  std::vector<double> theirs;
  for (std::string line; std::getline(scores, line);) {
    const size_t p = line.find(" p= ");
    if (line.rfind("> ", 0) != 0 || p == std::string::npos || line.find("NULL") != std::string::npos) continue;
    theirs.push_back(std::strtod(line.c_str() + p + 4, nullptr) / std::log(10.0));  // ln -> log10
  }
  ASSERT_EQ(theirs.size(), ours.size()) << dir.read("scores.txt");
  int backed_off = 0;
  for (size_t i = 0; i < ours.size(); ++i) {
    EXPECT_NEAR(ours[i], theirs[i], 1e-5) << "trigram " << i;
    backed_off += ours[i] < -1.0;
  }
  EXPECT_GT(backed_off, 5);  // the test reaches the backoff paths

  // The whole test text (with each p(w_1 | <s>)) against --eval's total, printed with 2 decimals.
  ASSERT_EQ(run("irstlm compile-lm lm.arpa --eval=test.se --debug=1"), 0) << dir.read("log.txt");
  const std::string eval = dir.read("log.txt");
  const size_t at = eval.rfind("logPr=");
  ASSERT_NE(at, std::string::npos) << eval;
  double total = 0;
  for (const auto& words : tests) total += lm.sentence_log10_prob(words);
  EXPECT_NEAR(total, std::strtod(eval.c_str() + at + 6, nullptr), 0.005 + 1e-9) << eval.substr(at);
}

}  // namespace
}  // namespace mixseq
