// CTC prefix beam search against an exhaustive search: on a tiny alphabet every frame path is
// enumerated, collapsed and summed per label sequence; a beam wide enough to keep every prefix must
// find the same sequences with the same probabilities, with and without a word language model.
#include "mixseq/decode/ctc_beam_search.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <map>

#include "mixseq/util/error.h"
#include "test_support.h"

namespace mixseq {
namespace {

// blank, a, b, space
CtcSymbols tiny_symbols() { return CtcSymbols::from_text("<blank>\na\nb\n<space>\n", "tiny vocab"); }

double log_add(double a, double b) {
  if (a == -INFINITY) return b;
  if (b == -INFINITY) return a;
  return std::max(a, b) + std::log1p(std::exp(-std::abs(a - b)));
}

struct Exhaustive {
  double log_prob = -INFINITY;         // ln P(y|x): sum over the paths that collapse to y
  double best_path = -INFINITY;        // the single most likely such path
  std::vector<int64_t> first, last;    // its frames per symbol
};

// Every path of T frames over V symbols, collapsed (repeats merged, blanks dropped).
std::map<std::vector<int64_t>, Exhaustive> exhaustive_search(const torch::Tensor& log_probs) {  // [T, V]
  const int64_t frames = log_probs.size(0), vocab = log_probs.size(1);
  const auto lp = log_probs.accessor<float, 2>();
  std::map<std::vector<int64_t>, Exhaustive> result;
  std::vector<int64_t> path(static_cast<size_t>(frames), 0);
  const auto paths = static_cast<int64_t>(std::pow(vocab, frames));
  for (int64_t p = 0; p < paths; ++p) {
    int64_t code = p;
    double log_prob = 0;
    for (int64_t t = 0; t < frames; ++t) {
      path[static_cast<size_t>(t)] = code % vocab;
      code /= vocab;
      log_prob += lp[t][path[static_cast<size_t>(t)]];
    }
    std::vector<int64_t> labels, first, last;
    for (int64_t t = 0; t < frames; ++t) {
      const int64_t s = path[static_cast<size_t>(t)];
      if (s != kCtcBlankId && (t == 0 || s != path[static_cast<size_t>(t - 1)])) {
        labels.push_back(s);
        first.push_back(t);
        last.push_back(t);
      } else if (s != kCtcBlankId) {
        last.back() = t;
      }
    }
    Exhaustive& e = result[labels];
    e.log_prob = log_add(e.log_prob, log_prob);
    if (log_prob > e.best_path) {
      e.best_path = log_prob;
      e.first = first;
      e.last = last;
    }
  }
  return result;
}

torch::Tensor random_log_probs(int64_t frames, int64_t vocab, uint64_t seed, double sharpness = 2.0) {
  torch::manual_seed(seed);
  return (torch::randn({frames, vocab}) * sharpness).log_softmax(-1);  // [T, V]
}

// blank and SentencePiece-style pieces: "▁a" and "▁b" begin words, "b" continues one, "▁" is a
// lone word boundary.
CtcSymbols tiny_pieces() {
  return CtcSymbols::from_text("<blank>\tpieces\n\xE2\x96\x81" "a\nb\n\xE2\x96\x81" "b\n", "tiny pieces");
}

// The words of a label sequence: the text of its symbols split at spaces ("▁a" reads " a").
std::vector<std::string> words_of(const std::vector<int64_t>& labels, const CtcSymbols& symbols) {
  std::string text;
  for (const int64_t s : labels) text += symbols.symbol(s);
  std::vector<std::string> words;
  std::string word;
  for (const char c : text + " ") {
    if (c == ' ') {
      if (!word.empty()) words.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  return words;
}

struct Ranked {
  std::vector<int64_t> labels;
  double score;
  double ctc;
};

// The exhaustive ranking by score = ln P(y|x) + alpha ln p_lm(words) + beta |words|.
std::vector<Ranked> rank(const std::map<std::vector<int64_t>, Exhaustive>& all, const CtcSymbols& symbols,
                         const ArpaLanguageModel* lm, double alpha, double beta, bool end_of_sentence = true) {
  std::vector<Ranked> ranked;
  for (const auto& [labels, e] : all) {
    const auto words = words_of(labels, symbols);
    const double lm_score = lm ? lm->sentence_log10_prob(words, end_of_sentence) * std::log(10.0) : 0.0;
    ranked.push_back({labels, e.log_prob + alpha * lm_score + beta * static_cast<double>(words.size()), e.log_prob});
  }
  std::sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) { return a.score > b.score; });
  return ranked;
}

TEST(CtcBeamSearch, WideBeamEqualsExhaustiveSearch) {
  const auto symbols = tiny_symbols();
  for (const int64_t frames : {1, 2, 3, 5, 6}) {
    for (const uint64_t seed : {1, 2, 3}) {
      const auto log_probs = random_log_probs(frames, 4, seed * 100 + static_cast<uint64_t>(frames));
      const auto all = exhaustive_search(log_probs);
      const auto expected = rank(all, symbols, nullptr, 0, 0);
      CtcBeamSearchOptions options;
      options.beam_size = 2000;  // more than the 1 + 3 + ... + 3^6 = 1093 label sequences
      options.nbest = 6;
      const auto found = ctc_beam_search_utterance(log_probs, symbols, options);
      ASSERT_EQ(found.size(), std::min<size_t>(6, expected.size()));
      for (size_t i = 0; i < found.size(); ++i) {
        SCOPED_TRACE("T=" + std::to_string(frames) + " seed " + std::to_string(seed) + " rank " + std::to_string(i));
        EXPECT_EQ(found[i].hypothesis.symbols, expected[i].labels);
        EXPECT_NEAR(found[i].ctc_log_prob, expected[i].ctc, 1e-6);
        EXPECT_NEAR(found[i].score, expected[i].score, 1e-6);
        // The alignment is the sequence's most likely single path.
        const Exhaustive& e = all.at(found[i].hypothesis.symbols);
        EXPECT_EQ(found[i].hypothesis.first_frame, e.first);
        EXPECT_EQ(found[i].hypothesis.last_frame, e.last);
      }
    }
  }
}

// A word model over the words the alphabet spells: "a", "b", "ab" listed, others are <unk>.
constexpr const char* kWordModel = R"(\data\
ngram 1=6
ngram 2=5

\1-grams:
-1.5	<unk>
-99	<s>	-0.3
-0.9	</s>
-0.4	a	-0.2
-0.7	b	-0.5
-0.6	ab	-0.1

\2-grams:
-0.1	<s> ab
-0.3	<s> b
-0.2	a b
-0.05	ab </s>
-0.1	b b

\end\
)";

TEST(CtcBeamSearch, ShallowFusionEqualsExhaustiveFormula) {
  const auto symbols = tiny_symbols();
  const auto lm = std::make_shared<const ArpaLanguageModel>(ArpaLanguageModel::from_text(kWordModel, "words.arpa"));
  const struct {
    double alpha, beta;
    bool end_of_sentence;
  } settings[] = {{0.5, 1.0, true}, {1.5, -0.5, true}, {0.8, 0.3, false}, {0.0, 2.0, true}};
  for (const auto& setting : settings) {
    for (const uint64_t seed : {4, 5, 6, 7}) {
      const auto log_probs = random_log_probs(6, 4, seed, 1.5);
      const auto all = exhaustive_search(log_probs);
      const auto expected = rank(all, symbols, lm.get(), setting.alpha, setting.beta, setting.end_of_sentence);
      CtcBeamSearchOptions options;
      options.beam_size = 2000;
      options.nbest = 4;
      options.alpha = setting.alpha;
      options.beta = setting.beta;
      options.lm_end_of_sentence = setting.end_of_sentence;
      options.language_model = lm;
      const auto found = ctc_beam_search_utterance(log_probs, symbols, options);
      ASSERT_EQ(found.size(), 4u);
      for (size_t i = 0; i < found.size(); ++i) {
        SCOPED_TRACE("alpha " + std::to_string(setting.alpha) + " beta " + std::to_string(setting.beta) + " seed " +
                     std::to_string(seed) + " rank " + std::to_string(i));
        EXPECT_EQ(found[i].hypothesis.symbols, expected[i].labels);
        EXPECT_NEAR(found[i].score, expected[i].score, 1e-6);
        EXPECT_NEAR(found[i].ctc_log_prob, expected[i].ctc, 1e-6);
        const auto words = words_of(found[i].hypothesis.symbols, symbols);
        EXPECT_EQ(found[i].words, static_cast<int64_t>(words.size()));
        EXPECT_NEAR(found[i].lm_log10_prob, lm->sentence_log10_prob(words, setting.end_of_sentence), 1e-9);
      }
    }
  }
}

// Pieces: a word ends where a piece that begins one follows ("▁a b ▁b" is the words "ab b").
TEST(CtcBeamSearch, ShallowFusionOverPiecesEqualsExhaustiveFormula) {
  const auto symbols = tiny_pieces();
  ASSERT_TRUE(symbols.pieces());
  EXPECT_EQ(words_of({1, 2, 3}, symbols), (std::vector<std::string>{"ab", "b"}));
  const auto lm = std::make_shared<const ArpaLanguageModel>(ArpaLanguageModel::from_text(kWordModel, "words.arpa"));
  for (const uint64_t seed : {11, 12, 13}) {
    const auto log_probs = random_log_probs(6, 4, seed, 1.5);
    const auto expected = rank(exhaustive_search(log_probs), symbols, lm.get(), 0.7, 0.4);
    CtcBeamSearchOptions options;
    options.beam_size = 2000;
    options.nbest = 4;
    options.alpha = 0.7;
    options.beta = 0.4;
    options.language_model = lm;
    const auto found = ctc_beam_search_utterance(log_probs, symbols, options);
    ASSERT_EQ(found.size(), 4u);
    for (size_t i = 0; i < found.size(); ++i) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " rank " + std::to_string(i));
      EXPECT_EQ(found[i].hypothesis.symbols, expected[i].labels);
      EXPECT_NEAR(found[i].score, expected[i].score, 1e-6);
      EXPECT_EQ(found[i].words, static_cast<int64_t>(words_of(found[i].hypothesis.symbols, symbols).size()));
    }
  }
}

TEST(CtcBeamSearch, LanguageModelChangesTheBestSequence) {
  // Frames that spell "b a" a little more likely than "b b"; the model prefers "b b" (log10 -0.3 - 0.1
  // - 1.4 = -1.8) to "b a" (-0.3 - 0.9 - 1.1 = -2.3), so a strong weight flips the choice.
  const auto symbols = tiny_symbols();
  auto probs = torch::full({3, 4}, 0.02);
  probs[0][2] = 0.94;  // b
  probs[1][3] = 0.94;  // space
  probs[2][1] = 0.50;  // a
  probs[2][2] = 0.46;  // b
  const auto log_probs = (probs / probs.sum(-1, true)).log();
  const auto lm = std::make_shared<const ArpaLanguageModel>(ArpaLanguageModel::from_text(kWordModel, "words.arpa"));
  CtcBeamSearchOptions options;
  options.beam_size = 8;
  EXPECT_EQ(symbols.decode(ctc_beam_search_utterance(log_probs, symbols, options)[0].hypothesis.symbols), "b a");
  options.language_model = lm;
  options.alpha = 2.0;
  const auto rescored = ctc_beam_search_utterance(log_probs, symbols, options);
  EXPECT_EQ(symbols.decode(rescored[0].hypothesis.symbols), "b b");
  // log10 p(b | <s>) + p(b | b) + p(</s> | b b) (backoff: bow(b) + p(</s>)).
  EXPECT_NEAR(rescored[0].lm_log10_prob, -0.3 - 0.1 + (-0.5 - 0.9), 1e-6);
  EXPECT_EQ(rescored[0].words, 2);
}

TEST(CtcBeamSearch, NarrowBeamAndPruningKeepFewerPaths) {
  const auto symbols = tiny_symbols();
  const auto log_probs = random_log_probs(6, 4, 11);
  const auto all = exhaustive_search(log_probs);
  CtcBeamSearchOptions options;
  options.beam_size = 3;
  options.nbest = 3;
  for (const auto& h : ctc_beam_search_utterance(log_probs, symbols, options))
    EXPECT_LE(h.ctc_log_prob, all.at(h.hypothesis.symbols).log_prob + 1e-9);
  // One symbol per frame: the only path left is the greedy one.
  options.cutoff_top_n = 1;
  const auto greedy = ctc_greedy_decode(log_probs.unsqueeze(0), torch::tensor({6}, torch::kLong))[0];
  const auto pruned = ctc_beam_search_utterance(log_probs, symbols, options);
  ASSERT_EQ(pruned.size(), 1u);
  EXPECT_EQ(pruned[0].hypothesis.symbols, greedy.symbols);
  EXPECT_NEAR(pruned[0].ctc_log_prob, std::get<0>(log_probs.max(-1)).sum().item<double>(), 1e-5);
  // A cumulative cut-off of (almost) nothing also keeps only the most likely symbol per frame.
  options.cutoff_top_n = 0;
  options.cutoff_prob = 1e-6;
  EXPECT_EQ(ctc_beam_search_utterance(log_probs, symbols, options)[0].hypothesis.symbols, greedy.symbols);
}

TEST(CtcBeamSearch, BeamOfOneIsGreedyWhereOnePathDominates) {
  // Near one-hot frames "a a _ a b b _ b": greedy's path holds almost all the mass.
  const auto symbols = tiny_symbols();
  const std::vector<int64_t> frames = {1, 1, 0, 1, 2, 2, 0, 2};
  auto logits = torch::zeros({1, 8, 4});
  for (size_t t = 0; t < frames.size(); ++t) logits[0][static_cast<int64_t>(t)][frames[t]] = 8.0;
  CtcBeamSearchOptions options;
  const auto beam = ctc_beam_search(logits, torch::tensor({8}, torch::kLong), symbols, options)[0];
  const auto greedy = ctc_greedy_decode(logits, torch::tensor({8}, torch::kLong))[0];
  ASSERT_EQ(beam.size(), 1u);
  EXPECT_EQ(beam[0].hypothesis.symbols, greedy.symbols);
  EXPECT_EQ(beam[0].hypothesis.first_frame, greedy.first_frame);
  EXPECT_EQ(beam[0].hypothesis.last_frame, greedy.last_frame);
}

TEST(CtcBeamSearch, BatchesRespectLengths) {
  const auto symbols = tiny_symbols();
  torch::manual_seed(3);
  const auto logits = torch::randn({3, 6, 4}) * 2;  // [B, T, V]
  const auto lengths = torch::tensor({6, 4, 0}, torch::kLong);
  CtcBeamSearchOptions options;
  options.beam_size = 16;
  options.nbest = 2;
  const auto batch = ctc_beam_search(logits, lengths, symbols, options);
  ASSERT_EQ(batch.size(), 3u);
  for (int64_t b = 0; b < 2; ++b) {
    const auto alone = ctc_beam_search_utterance(
        logits[b].narrow(0, 0, lengths[b].item<int64_t>()).log_softmax(-1).contiguous(), symbols, options);
    ASSERT_EQ(batch[static_cast<size_t>(b)].size(), alone.size());
    for (size_t i = 0; i < alone.size(); ++i) {
      EXPECT_EQ(batch[static_cast<size_t>(b)][i].hypothesis.symbols, alone[i].hypothesis.symbols);
      EXPECT_NEAR(batch[static_cast<size_t>(b)][i].score, alone[i].score, 1e-5);
    }
  }
  // No frames: the empty hypothesis, probability 1.
  ASSERT_EQ(batch[2].size(), 1u);
  EXPECT_TRUE(batch[2][0].hypothesis.symbols.empty());
  EXPECT_DOUBLE_EQ(batch[2][0].ctc_log_prob, 0.0);
}

TEST(CtcBeamSearch, ForcedAlignmentFindsTheBestPath) {
  // "a a" needs a blank between its symbols.
  auto probs = torch::full({5, 4}, 0.1);
  probs[0][1] = 0.7;
  probs[1][1] = 0.7;
  probs[2][0] = 0.7;
  probs[3][1] = 0.7;
  probs[4][1] = 0.7;
  const auto aligned = ctc_forced_alignment(probs.log(), {1, 1});
  EXPECT_EQ(aligned.first_frame, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(aligned.last_frame, (std::vector<int64_t>{1, 4}));
  EXPECT_NE(test::error_of([&] { ctc_forced_alignment(probs.log().narrow(0, 0, 2), {1, 1}); }).find("do not fit in 2 frames"),
            std::string::npos);
}

TEST(CtcBeamSearch, BadOptionsAreErrors) {
  const auto symbols = tiny_symbols();
  const auto log_probs = random_log_probs(3, 4, 1);
  auto error = [&](const CtcBeamSearchOptions& options) {
    return test::error_of([&] { ctc_beam_search_utterance(log_probs, symbols, options); });
  };
  CtcBeamSearchOptions options;
  options.beam_size = 0;
  EXPECT_NE(error(options).find("beam_size must be at least 1, not 0"), std::string::npos);
  options.beam_size = 2;
  options.nbest = 3;
  EXPECT_NE(error(options).find("nbest (3) must be from 1 to beam_size (2)"), std::string::npos);
  options.nbest = 1;
  options.cutoff_prob = 0;
  EXPECT_NE(error(options).find("cutoff_prob must be in (0, 1]"), std::string::npos);
  options.cutoff_prob = 1;
  options.language_model =
      std::make_shared<const ArpaLanguageModel>(ArpaLanguageModel::from_text(kWordModel, "words.arpa"));
  const auto no_space = CtcSymbols::from_text("<blank>\na\nb\n", "no space");
  EXPECT_NE(test::error_of([&] { ctc_beam_search_utterance(log_probs.narrow(1, 0, 3).log_softmax(-1).contiguous(),
                                                           no_space, options); })
                .find("needs a space symbol"),
            std::string::npos);
  EXPECT_NE(test::error_of([&] { ctc_beam_search(torch::zeros({1, 3, 5}), torch::tensor({3}), symbols, options); })
                .find("V = 4 symbols"),
            std::string::npos);
}

}  // namespace
}  // namespace mixseq
