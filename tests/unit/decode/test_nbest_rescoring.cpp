// N-best rescoring (decode/nbest_rescoring.h): a text's score is the sum of its pieces' and </s>'s
// log-probabilities computed one text at a time with the model's log_probs(), whatever it is
// batched with; unknown words are read as <unk> and counted; the new scores add W ln p and the
// word bonus.
#include "mixseq/decode/nbest_rescoring.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "mixseq/models/registry.h"
#include "mixseq/text/tokenizer.h"
#include "mixseq/text/vocabulary.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

// A tiny Transformer-XL over number words with random weights, words as pieces (tokenizer "none"),
// and same_length on, as Transformer-XL evaluates (the scorer turns it off).
TrainedLanguageModel tiny_language_model() {
  TokenCounts counts;
  for (const char* word : {"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"})
    counts[word] = 10;
  ModelConfig config;
  config.arch = "transformer_xl";
  auto& txl = config.transformer_xl;
  txl.n_layer = 2;
  txl.d_model = 16;
  txl.n_head = 2;
  txl.d_head = 8;
  txl.d_inner = 32;
  txl.mem_len = 4;
  txl.same_length = true;
  txl.cutoffs = {};
  auto vocabulary = Vocabulary::build(counts, VocabularyOptions{0, 1, 1});
  torch::manual_seed(7);
  auto model = build_language_model(config, vocabulary.size());
  model->eval();
  TrainedLanguageModel lm{config, std::move(vocabulary), load_tokenizer("none"), std::move(model)};
  return lm;
}

// ln p(t_1 .. t_n </s> | </s>) with one unbatched log_probs() call: the reference.
double direct_log_prob(LanguageModelImpl& model, const std::vector<int64_t>& ids) {
  torch::NoGradGuard no_grad;
  std::vector<int64_t> input = {kEosId};
  input.insert(input.end(), ids.begin(), ids.end());
  std::vector<int64_t> target = ids;
  target.push_back(kEosId);
  const auto log_probs = model.log_probs(torch::tensor(input).unsqueeze(0), LmMemory{}).log_probs[0];  // [T, V]
  double sum = 0;
  for (size_t t = 0; t < target.size(); ++t)
    sum += log_probs[static_cast<int64_t>(t)][target[t]].item<double>();
  return sum;
}

TEST(SentenceLmScorer, ScoreIsTheSumOfTheModelsTokenLogProbs) {
  auto lm = tiny_language_model();
  const auto model = lm.model;
  const SentenceLmScorer scorer(std::move(lm), torch::kCPU, Precision::kFp32);
  EXPECT_FALSE(model->context().same_length);
  // Lengths 0 to 9 (longer than mem_len and than each other), in one batch and in batches of one.
  const std::vector<std::string> texts = {"three one four",     "", "one",
                                          "nine nine nine nine nine nine nine nine nine",
                                          "two seven", "five three five eight"};
  const auto together = scorer.score(texts, 4096);
  const auto alone = scorer.score(texts, 1);
  ASSERT_EQ(together.size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    const auto ids = scorer.token_ids(texts[i]);
    const double expected = direct_log_prob(*model, ids);
    EXPECT_NEAR(together[i].log_prob, expected, 1e-4) << texts[i];
    EXPECT_NEAR(alone[i].log_prob, expected, 1e-4) << texts[i];
    EXPECT_LT(together[i].log_prob, 0) << texts[i];
    EXPECT_EQ(together[i].tokens, static_cast<int64_t>(ids.size()) + 1) << texts[i];
    EXPECT_EQ(together[i].unknown_tokens, 0) << texts[i];
  }
}

TEST(SentenceLmScorer, UnknownWordsAreReadAsUnkAndCounted) {
  auto lm = tiny_language_model();
  const auto model = lm.model;
  const SentenceLmScorer scorer(std::move(lm), torch::kCPU, Precision::kFp32);
  int64_t unknown = 0;
  const auto ids = scorer.token_ids("five siven zeve five", &unknown);
  EXPECT_EQ(unknown, 2);
  ASSERT_EQ(ids.size(), 4U);
  EXPECT_EQ(ids[1], kUnkId);
  EXPECT_EQ(ids[2], kUnkId);
  const auto scores = scorer.score({"five siven zeve five", "five <unk> <unk> five"});
  EXPECT_EQ(scores[0].unknown_tokens, 2);
  EXPECT_EQ(scores[1].unknown_tokens, 0);  // "<unk>" written out is the symbol itself, not an unknown piece
  EXPECT_NEAR(scores[0].log_prob, scores[1].log_prob, 1e-6);
  EXPECT_NEAR(scores[0].log_prob, direct_log_prob(*model, ids), 1e-4);
}

TEST(NbestRescoring, NewScoreAddsTheWeightedLogProbAndTheWordBonus) {
  NbestRescoringOptions options;
  options.lm_weight = 0.5;
  options.word_bonus = 2;
  const std::vector<std::string> texts = {"one two", "  one  two three ", ""};
  const std::vector<SentenceLmScore> lm = {{-4.0, 3, 0}, {-10.0, 4, 0}, {-1.0, 1, 0}};
  const auto scores = rescored_scores(texts, {-1.0, -2.0, -3.0}, lm, options);
  ASSERT_EQ(scores.size(), 3U);
  EXPECT_DOUBLE_EQ(scores[0], -1.0 - 2.0 + 4.0);
  EXPECT_DOUBLE_EQ(scores[1], -2.0 - 5.0 + 6.0);
  EXPECT_DOUBLE_EQ(scores[2], -3.0 - 0.5);
  EXPECT_EQ(count_words("  one  two three "), 3);
  EXPECT_THROW(rescored_scores(texts, {-1.0}, lm, options), Error);
}

}  // namespace
}  // namespace mixseq
