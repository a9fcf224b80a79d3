// BatchTranslator's decoding workers: batches decoded side by side give what one batch at a time gives.
#include "mixseq/decode/batch_translator.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "mixseq/models/transformer.h"
#include "mixseq/quant/calibration.h"
#include "mixseq/quant/quantization_config.h"
#include "mixseq/quant/quantization_plan.h"
#include "mixseq/util/error.h"
#include "mixseq/util/int8_engine.h"

namespace mixseq {
namespace {

constexpr int64_t kVocab = 40;

// Pieces are the words of the line; translate_ids never calls it.
class WhitespaceTokenizer : public Tokenizer {
 public:
  std::vector<std::string> encode(std::string_view line) const override {
    std::istringstream words{std::string(line)};
    std::vector<std::string> pieces;
    for (std::string word; words >> word;) pieces.push_back(word);
    return pieces;
  }
  std::string decode(const std::vector<std::string>& pieces) const override {
    std::string text;
    for (const auto& piece : pieces) text += (text.empty() ? "" : " ") + piece;
    return text;
  }
  std::string describe() const override { return "whitespace"; }
};

TransformerModel random_transformer() {
  TransformerConfig config;
  config.embed_dim = 64;
  config.ffn_dim = 128;
  config.heads = 2;
  config.encoder_layers = 2;
  config.decoder_layers = 2;
  config.dropout = 0.0;
  at::manual_seed(21);
  TransformerModel model(config, kVocab);
  model->eval();
  return model;
}

std::vector<std::vector<int64_t>> random_sources() {  // 14 sentences of 1 to 9 words
  at::manual_seed(22);
  std::vector<std::vector<int64_t>> sources;
  for (int64_t i = 0; i < 14; ++i) {
    const auto ids = at::randint(4, kVocab, {1 + i % 9}, at::kLong);
    sources.emplace_back(ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + ids.numel());
  }
  return sources;
}

std::vector<std::vector<Hypothesis>> translate(TransformerModel& model, int workers) {
  Vocabulary vocabulary = Vocabulary::build({});
  WhitespaceTokenizer tokenizer;
  BatchTranslator translator(*model, vocabulary, tokenizer, torch::kCPU, Precision::kFp32);
  TranslateOptions options;
  options.search.beam_size = 3;
  options.search.nbest = 2;
  options.search.max_len_a = 1.0;
  options.search.max_len_b = 3;
  options.max_tokens = 24;  // several batches of 2 to 6 sentences
  options.workers = workers;
  return translator.translate_ids(random_sources(), options);
}

void expect_same_translations(const std::vector<std::vector<Hypothesis>>& expected,
                              const std::vector<std::vector<Hypothesis>>& actual) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_EQ(actual[i].size(), expected[i].size()) << "sentence " << i;
    for (size_t k = 0; k < expected[i].size(); ++k) {
      EXPECT_EQ(actual[i][k].tokens, expected[i][k].tokens) << "sentence " << i << " hypothesis " << k;
      EXPECT_NEAR(actual[i][k].score, expected[i][k].score, 1e-4) << "sentence " << i << " hypothesis " << k;
    }
  }
}

TEST(BatchTranslatorWorkers, SideBySideBatchesGiveOneAtATimesTranslationsInInputOrder) {
  auto model = random_transformer();
  const auto one_at_a_time = translate(model, 1);
  ASSERT_EQ(one_at_a_time.size(), 14u);
  const int threads = at::get_num_threads();
  expect_same_translations(one_at_a_time, translate(model, 3));
  expect_same_translations(one_at_a_time, translate(model, 0));
  EXPECT_EQ(at::get_num_threads(), threads);  // the caller's thread count is left as it was
}

TEST(BatchTranslatorWorkers, Int8ModelIsSharedSafelyByTheWorkers) {
  if (!int8_engine_available()) GTEST_SKIP() << "this LibTorch has no ONEDNN or FBGEMM engine";
  auto model = random_transformer();
  const QuantizationConfig defaults;
  QuantizationPlan plan;
  {
    const Calibration calibration(*model, defaults);
    translate(model, 1);
    plan = make_quantization_plan(defaults, calibration);
  }
  apply_quantization_plan(*model, plan);
  const auto one_at_a_time = translate(model, 1);
  for (int round = 0; round < 3; ++round) expect_same_translations(one_at_a_time, translate(model, 4));
}

TEST(BatchTranslatorWorkers, AWorkersErrorReachesTheCallerAndTheModelsModeIsRestored) {
  auto model = random_transformer();
  model->train();
  Vocabulary vocabulary = Vocabulary::build({});
  WhitespaceTokenizer tokenizer;
  BatchTranslator translator(*model, vocabulary, tokenizer, torch::kCPU, Precision::kFp32);
  TranslateOptions options;
  options.search.beam_size = 0;  // rejected by every batch's search
  options.max_tokens = 24;
  options.workers = 3;
  EXPECT_THROW(translator.translate_ids(random_sources(), options), Error);
  EXPECT_TRUE(model->is_training());
}

}  // namespace
}  // namespace mixseq
