// LstmLmModel: segments with carried state against one long sequence, forward against LibTorch's
// own multi-layer LSTM composed by hand, weight drop against the same composition with the
// dropped matrices, the parameter count of word_language_model's bench shape, tied weights,
// bf16 autocast, the initialisation, the context and the config checks.
#include "mixseq/models/lstm_lm.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/rnn.h>

#include <cmath>
#include <map>
#include <string>
#include <unordered_set>
#include <vector>

#include "mixseq/models/registry.h"
#include "mixseq/nn/hashed_dropout.h"
#include "mixseq/nn/parameter_count.h"
#include "mixseq/text/vocabulary.h"
#include "model_test_support.h"
#include "test_support.h"

namespace mixseq {
namespace {

using test::error_of;

constexpr int64_t kLstmVocab = 30;

// E != H, so that the projection of the tied variant is exercised.
LstmLmConfig small_lstm_config() {
  LstmLmConfig config;
  config.embed_dim = 6;
  config.hidden_size = 5;
  config.num_layers = 2;
  return config;
}

LstmLmConfig without_dropout(LstmLmConfig config) {
  config.dropout_embed = config.dropout_hidden = config.dropout_output = config.weight_drop = 0.0;
  return config;
}

torch::Tensor random_ids(int64_t rows, int64_t length) {
  return at::randint(kSpecialSymbolCount, kLstmVocab, {rows, length}, at::kLong);
}

torch::Tensor parameter(torch::nn::Module& module, const std::string& name) { return module.named_parameters()[name]; }

// word_language_model's RNNModel at ../shared/peers/lstm_lm_bench.py's shape (LSTM, emsize 200,
// nhid 200, 2 layers, untied, ntoken 10000): encoder 2,000,000 + 2 LSTM layers of
// 4·200·(200 + 200) + 2·4·200 = 321,600 + decoder 200·10,000 + 10,000 = 4,653,200, as its
// sum(p.numel() for p in model.parameters()) prints.
TEST(LstmLm, ParameterCountEqualsWordLanguageModels) {
  LstmLmConfig config;  // the defaults are word_language_model's
  LstmLmModel model(config, 10000);
  EXPECT_EQ(count_parameters(*model), 4653200);
  config.tie_weights = true;  // the decoder's 2,000,000 weights are the encoder's
  EXPECT_EQ(count_parameters(*LstmLmModel(config, 10000)), 2653200);
  config.hidden_size = 300;  // tied through a projection 300 -> 200 without bias
  const int64_t layers = 4 * 300 * (200 + 300) + 8 * 300 + 4 * 300 * (300 + 300) + 8 * 300;
  EXPECT_EQ(count_parameters(*LstmLmModel(config, 10000)), 2000000 + layers + 300 * 200 + 10000);
}

TEST(LstmLm, IsRegisteredAsALanguageModel) {
  ModelConfig config;
  config.arch = "lstm_lm";
  config.lstm_lm = small_lstm_config();
  const auto model = build_language_model(config, kLstmVocab);
  EXPECT_EQ(model->vocab_size(), kLstmVocab);
  EXPECT_EQ(model_family("lstm_lm"), kLanguageModelFamily);
}

// Truncated BPTT with carried state: two segments, the second with the state the first returned,
// score their tokens exactly as one call over both; the state after both is the one long call's.
// In evaluation (no graph) and in training without dropout (the differentiable recurrence).
TEST(LstmLm, CarriedStateEqualsOneLongSequence) {
  torch::manual_seed(3);
  for (const bool training : {false, true}) {
    for (const bool tied : {false, true}) {
      auto config = without_dropout(small_lstm_config());
      config.tie_weights = tied;
      LstmLmModel model(config, kLstmVocab);
      model->train(training);
      const auto tokens = random_ids(3, 9), targets = random_ids(3, 9);
      const auto whole = model->forward(tokens, targets, {});
      const auto first = model->forward(tokens.narrow(1, 0, 4), targets.narrow(1, 0, 4), {});
      const auto second = model->forward(tokens.narrow(1, 4, 5), targets.narrow(1, 4, 5), first.memory);
      EXPECT_TRUE(at::allclose(at::cat({first.nll, second.nll}, 1), whole.nll, 1e-5, 1e-6))
          << "training " << training << " tied " << tied;
      ASSERT_EQ(whole.memory.layers.size(), 4u);  // h, c per layer
      for (size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(whole.memory.layers[i].sizes(), (at::IntArrayRef{3, 1, 5}));
        EXPECT_FALSE(whole.memory.layers[i].requires_grad());
        EXPECT_TRUE(at::allclose(second.memory.layers[i], whole.memory.layers[i], 1e-5, 1e-6));
      }
      // The memory is what training carries: the second segment's gradients stop at the boundary.
      if (training) {
        second.nll.sum().backward();
        EXPECT_TRUE(parameter(*model, "embedding.weight").grad().defined());
      }
    }
  }
}

// The model against LibTorch's own 2-layer nn::LSTM with its weights, the embedding lookup, the
// (projection and) output layer and log_softmax written out: the NLL of every target and the
// state after the segment.
TEST(LstmLm, ForwardEqualsLibTorchsLstmComposedByHand) {
  torch::manual_seed(5);
  for (const bool tied : {false, true}) {
    auto config = small_lstm_config();  // dropout on: evaluation must switch it off
    config.tie_weights = tied;
    LstmLmModel model(config, kLstmVocab);
    model->eval();
    torch::nn::LSTM reference(torch::nn::LSTMOptions(6, 5).num_layers(2).batch_first(true));
    {
      torch::NoGradGuard no_grad;
      parameter(*model, "output_bias").normal_();  // 0 at the start: give it something to add
      for (const char* name : {"weight_ih", "weight_hh", "bias_ih", "bias_hh"})
        for (int layer = 0; layer < 2; ++layer)
          parameter(*reference, std::string(name) + "_l" + std::to_string(layer))
              .copy_(parameter(*model, "layers." + std::to_string(layer) + "." + name + "_l0"));
    }
    const auto tokens = random_ids(2, 7);
    auto targets = random_ids(2, 7);
    targets[1][3] = kPadId;  // no target there: NLL 0
    LmMemory memory;
    for (int i = 0; i < 4; ++i) memory.layers.push_back(at::randn({2, 1, 5}));
    const auto h0 = at::stack({memory.layers[0].squeeze(1), memory.layers[2].squeeze(1)});  // [2 layers, B, H]
    const auto c0 = at::stack({memory.layers[1].squeeze(1), memory.layers[3].squeeze(1)});

    torch::NoGradGuard no_grad;
    const auto output = model->forward(tokens, targets, memory);
    const auto [y, state] = reference->forward(at::embedding(model->embedding_weight(), tokens),
                                               std::make_tuple(h0, c0));  // [B, T, H]
    const auto features = tied ? at::linear(y, parameter(*model, "projection.weight")) : y;  // [B, T, E or H]
    const auto log_probs = at::log_softmax(at::linear(features, model->output_weight(), parameter(*model, "output_bias")), -1);
    auto expected = -log_probs.gather(2, targets.unsqueeze(2)).squeeze(2);  // [B, T]
    expected[1][3] = 0.0;
    EXPECT_TRUE(at::allclose(output.nll, expected, 1e-5, 1e-6)) << output.nll << expected;
    const auto& [h, c] = state;
    for (int layer = 0; layer < 2; ++layer) {
      EXPECT_TRUE(at::allclose(output.memory.layers[2 * layer].squeeze(1), h[layer], 1e-5, 1e-6));
      EXPECT_TRUE(at::allclose(output.memory.layers[2 * layer + 1].squeeze(1), c[layer], 1e-5, 1e-6));
    }
    // log_probs() gives the whole distribution the NLL is taken from.
    const auto all = model->log_probs(tokens, memory);
    EXPECT_TRUE(at::allclose(all.log_probs, log_probs, 1e-5, 1e-6));
    EXPECT_TRUE(at::allclose(all.memory.layers[3], output.memory.layers[3]));
  }
}

// Training's gradients: every parameter's, from the summed NLL of a segment with a carried state,
// against autograd through the same composition of LibTorch's 2-layer LSTM (untied and tied
// through the projection; the tied matrix gets both uses' gradients).
TEST(LstmLm, GradientsEqualLibTorchsComposition) {
  torch::manual_seed(12);
  for (const bool tied : {false, true}) {
    auto config = without_dropout(small_lstm_config());
    config.tie_weights = tied;
    LstmLmModel model(config, kLstmVocab);
    model->train();
    torch::nn::LSTM reference(torch::nn::LSTMOptions(6, 5).num_layers(2).batch_first(true));
    std::map<std::string, torch::Tensor> copies;  // the model's other parameters, as leaves
    {
      torch::NoGradGuard no_grad;
      parameter(*model, "output_bias").normal_();
      for (const char* name : {"weight_ih", "weight_hh", "bias_ih", "bias_hh"})
        for (int layer = 0; layer < 2; ++layer)
          parameter(*reference, std::string(name) + "_l" + std::to_string(layer))
              .copy_(parameter(*model, "layers." + std::to_string(layer) + "." + name + "_l0"));
      for (const auto& p : model->named_parameters())
        if (p.key().rfind("layers.", 0) != 0) copies[p.key()] = p.value().detach().clone().requires_grad_(true);
    }
    const auto tokens = random_ids(3, 6), targets = random_ids(3, 6);
    LmMemory memory;
    for (int i = 0; i < 4; ++i) memory.layers.push_back(at::randn({3, 1, 5}));
    model->forward(tokens, targets, memory).nll.sum().backward();

    const auto h0 = at::stack({memory.layers[0].squeeze(1), memory.layers[2].squeeze(1)});
    const auto c0 = at::stack({memory.layers[1].squeeze(1), memory.layers[3].squeeze(1)});
    const auto y = std::get<0>(reference->forward(at::embedding(copies["embedding.weight"], tokens),
                                                  std::make_tuple(h0, c0)));
    const auto features = tied ? at::linear(y, copies["projection.weight"]) : y;
    const auto& output = tied ? copies["embedding.weight"] : copies["output_weight"];
    const auto log_probs = at::log_softmax(at::linear(features, output, copies["output_bias"]), -1);
    (-log_probs.gather(2, targets.unsqueeze(2))).sum().backward();

    for (const auto& [name, copy] : copies)
      EXPECT_TRUE(at::allclose(parameter(*model, name).grad(), copy.grad(), 1e-4, 1e-5)) << name << " tied " << tied;
    for (const char* name : {"weight_ih", "weight_hh", "bias_ih", "bias_hh"})
      for (int layer = 0; layer < 2; ++layer) {
        const auto mine = parameter(*model, "layers." + std::to_string(layer) + "." + name + "_l0").grad();
        const auto theirs = parameter(*reference, std::string(name) + "_l" + std::to_string(layer)).grad();
        EXPECT_TRUE(at::allclose(mine, theirs, 1e-4, 1e-5)) << name << layer << " tied " << tied;
      }
  }
}

// AWD-LSTM's weight drop: in training each layer's W_hh is replaced by its dropout, one mask for
// the whole segment. The masks are hashed_dropout's draws from LibTorch's generator in layer
// order (the other dropouts are 0 and draw nothing), so the same seed gives the same matrices
// to a composition of at::lstm with them; the raw matrix gets the gradient, 0 where dropped.
TEST(LstmLm, WeightDropEqualsTheLstmWithDroppedRecurrentMatrices) {
  auto config = without_dropout(small_lstm_config());
  config.weight_drop = 0.5;
  torch::manual_seed(11);
  LstmLmModel model(config, kLstmVocab);
  model->train();
  const auto tokens = random_ids(2, 6), targets = random_ids(2, 6);
  std::vector<torch::Tensor> dropped;
  torch::manual_seed(42);
  for (int layer = 0; layer < 2; ++layer)
    dropped.push_back(
        hashed_dropout(parameter(*model, "layers." + std::to_string(layer) + ".weight_hh_l0").detach(), 0.5, true));
  torch::manual_seed(42);
  const auto output = model->forward(tokens, targets, {});

  auto x = at::embedding(model->embedding_weight(), tokens).detach();  // [B, T, E]
  for (int layer = 0; layer < 2; ++layer) {
    const auto name = [&](const char* what) { return "layers." + std::to_string(layer) + "." + what + "_l0"; };
    const auto zeros = at::zeros({1, 2, 5});
    x = std::get<0>(at::lstm(x, {zeros, zeros},
                             {parameter(*model, name("weight_ih")).detach(), dropped[layer],
                              parameter(*model, name("bias_ih")).detach(), parameter(*model, name("bias_hh")).detach()},
                             true, 1, 0.0, false, false, true));
  }
  const auto log_probs = at::log_softmax(at::linear(x, model->output_weight(), parameter(*model, "output_bias")), -1);
  const auto expected = -log_probs.gather(2, targets.unsqueeze(2)).squeeze(2);
  EXPECT_TRUE(at::allclose(output.nll, expected, 1e-5, 1e-6)) << output.nll << expected;
  output.nll.sum().backward();
  for (int layer = 0; layer < 2; ++layer) {
    const auto grad = parameter(*model, "layers." + std::to_string(layer) + ".weight_hh_l0").grad();
    EXPECT_EQ(grad.masked_select(dropped[layer] == 0).abs().max().item<float>(), 0.0f);
    EXPECT_GT(grad.masked_select(dropped[layer] != 0).abs().max().item<float>(), 0.0f);
  }
  // In evaluation nothing is dropped: the weights as they are.
  model->eval();
  auto plain = without_dropout(small_lstm_config());
  LstmLmModel same(plain, kLstmVocab);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : same->named_parameters()) p.value().copy_(parameter(*model, p.key()));
  }
  same->eval();
  EXPECT_TRUE(at::equal(model->forward(tokens, targets, {}).nll, same->forward(tokens, targets, {}).nll));
}

// Tied: one tensor for the word vectors and the output vectors, listed once, so that an
// optimizer steps it once and both uses add to its gradient.
TEST(LstmLm, TiedEmbeddingSharesStorage) {
  auto config = without_dropout(small_lstm_config());
  config.tie_weights = true;
  LstmLmModel model(config, kLstmVocab);
  EXPECT_TRUE(model->output_weight().is_same(model->embedding_weight()));
  EXPECT_EQ(model->output_weight().data_ptr(), model->embedding_weight().data_ptr());
  const auto names = model->named_parameters().keys();
  EXPECT_EQ(std::count(names.begin(), names.end(), "output_weight"), 0);
  EXPECT_EQ(std::count(names.begin(), names.end(), "projection.weight"), 1);  // H 5 != E 6
  std::unordered_set<const void*> seen;
  for (const auto& p : model->parameters()) EXPECT_TRUE(seen.insert(p.unsafeGetTensorImpl()).second);
  // A target the input never holds still trains its (shared) vector through the output layer.
  const auto tokens = at::full({1, 3}, kSpecialSymbolCount, at::kLong);
  const auto targets = at::full({1, 3}, kSpecialSymbolCount + 1, at::kLong);
  model->forward(tokens, targets, {}).nll.sum().backward();
  const auto grad = model->embedding_weight().grad();
  EXPECT_GT(grad[kSpecialSymbolCount + 1].abs().sum().item<float>(), 0.0f);
  // Untied: two tensors.
  config.tie_weights = false;
  LstmLmModel untied(config, kLstmVocab);
  EXPECT_FALSE(untied->output_weight().is_same(untied->embedding_weight()));
  EXPECT_EQ(untied->named_parameters()["output_weight"].sizes(), (at::IntArrayRef{kLstmVocab, 5}));
}

// Under bf16 autocast the products run in bf16; the NLL, the state and the log-probabilities stay
// fp32, close to the fp32 model's; training's backward runs.
TEST(LstmLm, Bf16AutocastForwardRuns) {
  torch::manual_seed(8);
  auto config = without_dropout(small_lstm_config());
  config.hidden_size = config.embed_dim = 16;
  config.tie_weights = true;
  LstmLmModel model(config, kLstmVocab);
  model->eval();
  const auto tokens = random_ids(2, 5), targets = random_ids(2, 5);
  const auto fp32 = model->forward(tokens, targets, {});
  LmOutput bf16;
  LmLogProbs bf16_log_probs;
  {
    test::CpuAutocast autocast;
    bf16 = model->forward(tokens, targets, {});
    bf16_log_probs = model->log_probs(tokens, bf16.memory);
  }
  EXPECT_EQ(bf16.nll.scalar_type(), at::kFloat);
  EXPECT_EQ(bf16.memory.layers[0].scalar_type(), at::kFloat);
  EXPECT_EQ(bf16_log_probs.log_probs.scalar_type(), at::kFloat);
  EXPECT_TRUE(at::isfinite(bf16.nll).all().item<bool>());
  EXPECT_LT((bf16.nll - fp32.nll).abs().max().item<float>(), 0.05f) << bf16.nll << fp32.nll;
  model->train();
  {
    test::CpuAutocast autocast;
    model->forward(tokens, targets, {}).nll.sum().backward();
  }
  EXPECT_TRUE(at::isfinite(model->embedding_weight().grad()).all().item<bool>());
}

// With bf16 weights (model->to(bf16)) nn/lstm_recurrence.h does not apply and each layer runs
// LibTorch's at::lstm, the path the GPU takes too: the same NLL as the fp32 model within bf16's
// rounding, fp32 out, and a state in the weights' dtype that the next segment accepts.
TEST(LstmLm, Bf16WeightsRunLibTorchsLstm) {
  torch::manual_seed(9);
  LstmLmModel model(without_dropout(small_lstm_config()), kLstmVocab);
  model->eval();
  const auto tokens = random_ids(2, 5), targets = random_ids(2, 5);
  const auto fp32 = model->forward(tokens, targets, {});
  model->to(at::kBFloat16);
  const auto bf16 = model->forward(tokens, targets, {});
  EXPECT_EQ(bf16.nll.scalar_type(), at::kFloat);
  EXPECT_EQ(bf16.memory.layers[0].scalar_type(), at::kBFloat16);
  EXPECT_LT((bf16.nll - fp32.nll).abs().max().item<float>(), 0.1f) << bf16.nll << fp32.nll;
  const auto next = model->forward(tokens, targets, bf16.memory);
  EXPECT_TRUE(at::isfinite(next.nll).all().item<bool>());
}

// word_language_model's init_weights: encoder and decoder U(-0.1, 0.1), decoder bias 0; the LSTM
// keeps PyTorch's U(-1/sqrt(H), 1/sqrt(H)).
TEST(LstmLm, InitialisationIsWordLanguageModels) {
  LstmLmConfig config;
  config.embed_dim = 64;
  config.hidden_size = 100;
  LstmLmModel model(config, 500);
  for (const char* name : {"embedding.weight", "output_weight"}) {
    const auto p = parameter(*model, name);
    EXPECT_LE(p.abs().max().item<float>(), 0.1f) << name;
    EXPECT_GT(p.abs().max().item<float>(), 0.09f) << name;  // the whole range, not a narrower one
  }
  EXPECT_EQ(parameter(*model, "output_bias").abs().max().item<float>(), 0.0f);
  const auto w = parameter(*model, "layers.1.weight_hh_l0");
  EXPECT_LE(w.abs().max().item<float>(), 0.1f);  // 1 / sqrt(100)
  EXPECT_GT(w.abs().max().item<float>(), 0.09f);
}

// The context has nothing to size in an LSTM: any valid one is kept and changes nothing.
TEST(LstmLm, ContextIsKeptAndChangesNothing) {
  LstmLmModel model(without_dropout(small_lstm_config()), kLstmVocab);
  model->eval();
  const auto tokens = random_ids(2, 4), targets = random_ids(2, 4);
  const auto before = model->forward(tokens, targets, {}).nll;
  model->set_context(LmContext{640, 400, true});
  EXPECT_EQ(model->context().mem_len, 640);
  EXPECT_TRUE(at::equal(model->forward(tokens, targets, {}).nll, before));
  EXPECT_NE(error_of([&] { model->set_context(LmContext{-1, -1, false}); }).find("mem_len"), std::string::npos);
}

TEST(LstmLm, BadConfigValuesNameTheirKeys) {
  const auto error_with = [](auto change) {
    auto config = small_lstm_config();
    change(config);
    return error_of([&] { LstmLmModel(config, kLstmVocab); });
  };
  EXPECT_NE(error_with([](LstmLmConfig& c) { c.hidden_size = 0; }).find("model.lstm_lm.hidden_size must be positive"),
            std::string::npos);
  EXPECT_NE(error_with([](LstmLmConfig& c) { c.dropout_hidden = 1.0; }).find("model.lstm_lm.dropout_hidden"),
            std::string::npos);
  EXPECT_NE(error_with([](LstmLmConfig& c) { c.weight_drop = -0.1; }).find("model.lstm_lm.weight_drop"),
            std::string::npos);
  LstmLmModel model(small_lstm_config(), kLstmVocab);
  LmMemory wrong;
  wrong.layers = {at::zeros({1, 1, 5})};
  EXPECT_NE(error_of([&] { model->forward(random_ids(1, 2), random_ids(1, 2), wrong); }).find("h and c"),
            std::string::npos);
  EXPECT_NE(error_of([&] { model->forward(random_ids(1, 2) + kLstmVocab, random_ids(1, 2), {}); }).find("tokens"),
            std::string::npos);
}

}  // namespace
}  // namespace mixseq
