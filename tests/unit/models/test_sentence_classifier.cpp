// models/sentence_classifier.h: shapes, the head over the pooled encoder states (recomputed with
// LibTorch's own ops), a language model's checkpoint loading into the encoder, and the layer groups.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <set>

#include "mixseq/models/checkpoint.h"
#include "mixseq/models/lstm_lm.h"
#include "mixseq/models/registry.h"
#include "mixseq/models/sentence_classifier.h"
#include "test_support.h"

namespace mixseq {
namespace {

ModelConfig classifier_config(int64_t classes, const std::string& pooling = "concat", int64_t head_hidden = 5) {
  ModelConfig config;
  config.arch = "lm_classifier";
  config.lstm_lm.embed_dim = 6;
  config.lstm_lm.hidden_size = 4;
  config.lstm_lm.num_layers = 2;
  config.lm_classifier.num_classes = classes;
  config.lm_classifier.pooling = pooling;
  config.lm_classifier.head_hidden = head_hidden;
  return config;
}

TEST(SentenceClassifier, LogitsAreTheHeadOverThePooledEncoderStates) {
  torch::manual_seed(3);
  auto model = build_sentence_classifier(classifier_config(3), 11);
  model->eval();
  const auto tokens = torch::tensor(std::vector<int64_t>{3, 5, 6, 3, 0, 3, 7, 8, 9, 3}).view({2, 5});
  const auto lengths = torch::tensor(std::vector<int64_t>{4, 5});
  const auto logits = model->forward(tokens, lengths);
  ASSERT_EQ(logits.sizes(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(logits.scalar_type(), torch::kFloat);
  // By hand: the encoder's states, [last; max; mean] over each row's positions, Linear-ReLU-Linear.
  const auto states = model->encoder()->encode(tokens, {}).first;  // [2, 5, 4]
  std::vector<torch::Tensor> rows;
  for (int64_t b = 0; b < 2; ++b) {
    const auto own = states[b].slice(0, 0, lengths[b].item<int64_t>());
    rows.push_back(torch::cat({own[-1], std::get<0>(own.max(0)), own.mean(0)}));
  }
  const auto pooled = torch::stack(rows);
  const auto params = model->named_parameters();
  const auto hidden = torch::relu(torch::linear(pooled, params["head.hidden.weight"], params["head.hidden.bias"]));
  const auto expected = torch::linear(hidden, params["head.output.weight"], params["head.output.bias"]);
  EXPECT_TRUE(torch::allclose(logits, expected, 1e-5, 1e-6));
  // The padded position of row 0 changes nothing: row 0 alone, unpadded, gives the same logits.
  const auto alone = model->forward(tokens.slice(0, 0, 1).slice(1, 0, 4), lengths.slice(0, 0, 1));
  EXPECT_TRUE(torch::allclose(alone, logits.slice(0, 0, 1), 1e-5, 1e-6));
}

TEST(SentenceClassifier, TheEncoderHasNoOutputLayerAndTheGroupsCoverEveryParameterOnce) {
  auto model = build_sentence_classifier(classifier_config(2, "last", 0), 11);
  for (const auto& parameter : model->named_parameters()) {
    EXPECT_EQ(parameter.key().find("output_"), std::string::npos) << parameter.key();
    EXPECT_EQ(parameter.key().find("projection"), std::string::npos) << parameter.key();
  }
  EXPECT_EQ(model->named_parameters()["head.output.weight"].sizes(), (std::vector<int64_t>{2, 4}));  // last: P = H
  const auto groups = model->layer_groups();
  ASSERT_EQ(groups.size(), 3u);  // head, layer 1, layer 0 + word vectors
  std::set<const void*> seen;
  size_t count = 0;
  for (const auto& group : groups)
    for (const auto& parameter : group) {
      seen.insert(parameter.data_ptr());
      ++count;
    }
  EXPECT_EQ(count, model->parameters().size());
  EXPECT_EQ(seen.size(), count);
  const auto encoder = std::dynamic_pointer_cast<LstmLmModelImpl>(model->encoder());
  ASSERT_TRUE(encoder);
  EXPECT_TRUE(groups.back().back().is_same(encoder->embedding_weight()));
}

TEST(SentenceClassifier, ALanguageModelsCheckpointLoadsIntoTheEncoder) {
  const test::TempDir dir;
  ModelConfig lm_config = classifier_config(2);
  lm_config.arch = "lstm_lm";
  lm_config.lstm_lm.tie_weights = true;
  lm_config.lstm_lm.hidden_size = 8;  // tied, H != E: the language model has a projection
  torch::manual_seed(1);
  const auto lm = build_language_model(lm_config, 11);
  save_checkpoint(dir.path("lm.pt"), CheckpointContents{}, *lm, nullptr);
  auto config = classifier_config(2);
  config.lstm_lm = lm_config.lstm_lm;
  torch::manual_seed(2);
  auto model = build_sentence_classifier(config, 11);
  load_model_weights(dir.path("lm.pt"), *model->encoder());
  const auto lm_parameters = lm->named_parameters();
  for (const auto& parameter : model->encoder()->named_parameters())
    EXPECT_TRUE(parameter.value().equal(lm_parameters[parameter.key()])) << parameter.key();
  EXPECT_NE(test::error_of([&] { model->encoder()->forward(torch::ones({1, 2}, torch::kLong),
                                                           torch::ones({1, 2}, torch::kLong), {}); })
                .find("without its output layer"),
            std::string::npos);
}

TEST(SentenceClassifier, BadSettingsAreNamed) {
  EXPECT_NE(test::error_of([] { build_sentence_classifier(classifier_config(1), 11); })
                .find("model.lm_classifier.num_classes must be at least 2"),
            std::string::npos);
  auto config = classifier_config(2);
  config.lm_classifier.head_hidden = -1;
  EXPECT_NE(test::error_of([&] { build_sentence_classifier(config, 11); }).find("head_hidden must be 0 or more"),
            std::string::npos);
}

// A Transformer-XL encoder: a language model's checkpoint (its softmax left out) loads into it, a
// row's logits do not depend on the padding after it (causal attention), and the layer groups
// cover every parameter once.
TEST(SentenceClassifier, ATransformerXlEncoderLoadsItsLanguageModel) {
  const test::TempDir dir;
  ModelConfig lm_config;
  lm_config.arch = "transformer_xl";
  auto& txl = lm_config.transformer_xl;
  txl.n_layer = 2, txl.d_model = 8, txl.n_head = 2, txl.d_head = 4, txl.d_inner = 16, txl.mem_len = 4;
  torch::manual_seed(1);
  const auto lm = build_language_model(lm_config, 13);
  save_checkpoint(dir.path("txl.pt"), CheckpointContents{}, *lm, nullptr);
  auto config = classifier_config(3, "concat", 0);
  config.lm_classifier.encoder = "transformer_xl";
  config.transformer_xl = txl;
  torch::manual_seed(2);
  auto model = build_sentence_classifier(config, 13);
  load_model_weights(dir.path("txl.pt"), *model->encoder());
  const auto lm_parameters = lm->named_parameters();
  for (const auto& parameter : model->encoder()->named_parameters()) {
    EXPECT_EQ(parameter.key().rfind("softmax", 0), std::string::npos) << parameter.key();
    EXPECT_TRUE(parameter.value().equal(lm_parameters[parameter.key()])) << parameter.key();
  }
  model->eval();
  const auto tokens = torch::tensor(std::vector<int64_t>{3, 5, 6, 3, 0, 0, 3, 7, 8, 9, 10, 3}).view({2, 6});
  const auto lengths = torch::tensor(std::vector<int64_t>{4, 6});
  const auto logits = model->forward(tokens, lengths);
  ASSERT_EQ(logits.sizes(), (std::vector<int64_t>{2, 3}));
  const auto alone = model->forward(tokens.slice(0, 0, 1).slice(1, 0, 4), lengths.slice(0, 0, 1));
  EXPECT_TRUE(torch::allclose(alone, logits.slice(0, 0, 1), 1e-5, 1e-6));
  size_t count = 0;
  std::set<const void*> seen;
  for (const auto& group : model->layer_groups())
    for (const auto& parameter : group) {
      seen.insert(parameter.data_ptr());
      ++count;
    }
  EXPECT_EQ(count, model->parameters().size());
  EXPECT_EQ(seen.size(), count);
}

}  // namespace
}  // namespace mixseq
