// TransformerXlModel: parameter counts of the reference, segments with memory against one long
// forward, the memory it returns, the same_length mask, log-probabilities against the NLL,
// tied weights, the initialisation, the context and config checks.
#include "mixseq/models/transformer_xl.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <unordered_set>
#include <vector>

#include "mixseq/models/registry.h"
#include "mixseq/nn/parameter_count.h"
#include "mixseq/text/vocabulary.h"
#include "model_test_support.h"
#include "test_support.h"

namespace mixseq {
namespace {

using test::error_of;

constexpr int64_t kXlVocab = 40;

TransformerXlConfig small_xl_config() {
  TransformerXlConfig config;
  config.n_layer = 2;
  config.d_model = 12;
  config.n_head = 3;
  config.d_head = 4;
  config.d_inner = 20;
  config.dropout = 0.1;
  config.dropatt = 0.1;
  config.mem_len = 6;
  config.cutoffs = {10, 25};
  config.div_val = 2;
  config.d_embed = 16;
  config.tie_projs = true;
  return config;
}

torch::Tensor random_ids(int64_t rows, int64_t length) {
  return at::randint(kSpecialSymbolCount, kXlVocab, {rows, length}, at::kLong);
}

// The reference's MemTransformerLM at the bench shape (vocabulary 2000, 4 layers of 256, 8 heads
// of 32, d_inner 1024, tied full softmax): 3,931,600 parameters, 3,417,088 of them in the layers;
// and at the WikiText-2 small preset (vocabulary 33,278, cutoffs 2000/10000, div_val 1, tied):
// 11,970,560. The reference's figures: sum(p.numel() for p in model.parameters()).
TEST(TransformerXl, ParameterCountsEqualTheReferences) {
  TransformerXlConfig config;
  config.n_layer = 4;
  config.d_model = 256;
  config.n_head = 8;
  config.d_head = 32;
  config.d_inner = 1024;
  TransformerXlModel bench(config, 2000);
  EXPECT_EQ(count_parameters(*bench), 3931600);
  EXPECT_EQ(count_parameters(*bench->named_children()["layers"]), 3417088);
  config.cutoffs = {2000, 10000};
  TransformerXlModel small(config, 33278);
  EXPECT_EQ(count_parameters(*small), 11970560);
  // Every tensor once: parameters() lists no tensor twice, so an optimizer steps each once.
  std::unordered_set<const void*> seen;
  for (const auto& p : small->parameters()) EXPECT_TRUE(seen.insert(p.unsafeGetTensorImpl()).second);
}

TEST(TransformerXl, IsRegisteredAsALanguageModel) {
  ModelConfig config;
  config.arch = "transformer_xl";
  config.transformer_xl = small_xl_config();
  const auto model = build_language_model(config, kXlVocab);
  EXPECT_EQ(model->vocab_size(), kXlVocab);
  EXPECT_EQ(model->context().mem_len, 6);
}

// Segment-level recurrence (Dai et al. 2019, §3.2): two segments, the second with the memory the
// first returned, score their tokens exactly as one forward over both (same memory before them),
// when the memory keeps everything; without the memory the second segment scores differently.
TEST(TransformerXl, SegmentsWithMemoryEqualOneLongForward) {
  at::manual_seed(1);
  auto config = small_xl_config();
  config.mem_len = 3 + 2 * 5;
  config.init_std = config.proj_init_std = 0.3;  // far from uniform predictions, so that the context shows
  TransformerXlModel model(config, kXlVocab);
  model->eval();
  torch::NoGradGuard no_grad;
  const int64_t rows = 2, t = 5;
  const auto first = model(random_ids(rows, 3), random_ids(rows, 3), LmMemory{});  // a memory of 3 to start from
  const auto tokens = random_ids(rows, 2 * t), targets = random_ids(rows, 2 * t);
  const auto whole = model(tokens, targets, first.memory);
  const auto a = model(tokens.slice(1, 0, t), targets.slice(1, 0, t), first.memory);
  const auto b = model(tokens.slice(1, t), targets.slice(1, t), a.memory);
  EXPECT_TRUE(at::allclose(at::cat({a.nll, b.nll}, 1), whole.nll, 1e-5, 1e-6));
  for (size_t i = 0; i < whole.memory.layers.size(); ++i)
    EXPECT_TRUE(at::allclose(b.memory.layers[i], whole.memory.layers[i], 1e-5, 1e-6)) << "layer " << i;
  const auto without = model(tokens.slice(1, t), targets.slice(1, t), LmMemory{});
  EXPECT_FALSE(at::allclose(without.nll, b.nll, 1e-3, 1e-3));
}

// The memory is every layer's input at the last mem_len positions of [memory; segment], detached.
TEST(TransformerXl, MemoryKeepsTheLastMemLenInputsOfEveryLayerDetached) {
  at::manual_seed(2);
  TransformerXlModel model(small_xl_config(), kXlVocab);  // mem_len 6
  const auto a = model(random_ids(2, 4), random_ids(2, 4), LmMemory{});
  ASSERT_EQ(a.memory.layers.size(), 2u);
  EXPECT_EQ(a.memory.length(), 4);  // all of a first segment shorter than mem_len
  const auto b = model(random_ids(2, 4), random_ids(2, 4), a.memory);
  EXPECT_EQ(b.memory.length(), 6);
  for (const auto& layer : b.memory.layers) {
    EXPECT_EQ(layer.sizes(), (std::vector<int64_t>{2, 6, 12}));
    EXPECT_FALSE(layer.requires_grad());
  }
  // The first layer's memory is the (dropped-out, here eval) embedding of the last tokens.
  model->eval();
  torch::NoGradGuard no_grad;
  const auto tokens = random_ids(2, 4);
  const auto c = model(tokens, random_ids(2, 4), a.memory);
  EXPECT_TRUE(at::allclose(c.memory.layers[0].slice(1, 2), model->embedding()->forward(tokens), 1e-6, 1e-6));
  EXPECT_TRUE(at::equal(c.memory.layers[0].slice(1, 0, 2), a.memory.layers[0].slice(1, 2)));
  model->set_context({0, -1, false});
  EXPECT_TRUE(model(tokens, tokens, a.memory).memory.empty());  // mem_len 0 keeps nothing
}

// same_length (the reference's --same_length): with a full memory, query i sees the mem_len keys
// that end at its own position, so a memory position p is seen by the queries before p only. One
// layer, so that nothing reaches a query through another position.
TEST(TransformerXl, SameLengthLimitsEveryQueryToMemLenKeys) {
  at::manual_seed(3);
  auto config = small_xl_config();
  config.n_layer = 1;
  config.mem_len = 4;
  TransformerXlModel model(config, kXlVocab);
  model->eval();
  torch::NoGradGuard no_grad;
  const auto memory = model(random_ids(1, 4), random_ids(1, 4), LmMemory{}).memory;  // M = 4 = mem_len
  const auto tokens = random_ids(1, 4), targets = random_ids(1, 4);
  LmMemory changed = memory;
  const int64_t p = 2;
  changed.layers[0] = memory.layers[0].clone();
  changed.layers[0].select(1, p).normal_();
  for (const bool same_length : {false, true}) {
    model->set_context({4, -1, same_length});
    const auto before = model(tokens, targets, memory).nll, after = model(tokens, targets, changed).nll;  // [1, 4]
    for (int64_t i = 0; i < 4; ++i) {
      const bool sees_p = !same_length || i < p;
      EXPECT_EQ(at::allclose(before[0][i], after[0][i], 1e-6, 1e-7), !sees_p) << "same_length " << same_length << " i " << i;
    }
  }
}

// In evaluation each layer's keys and values of the memory come back in LmMemory::reusable and
// the next segment uses them instead of projecting the memory again; only while they belong to
// the memory tensors passed and to unchanged weights.
TEST(TransformerXl, EvaluationReusesTheMemorysKeysAndValuesOnlyWhileValid) {
  at::manual_seed(8);
  for (const bool pre_lnorm : {false, true}) {
    auto config = small_xl_config();
    config.pre_lnorm = pre_lnorm;
    config.init_std = config.proj_init_std = 0.3;
    TransformerXlModel model(config, kXlVocab);
    model->eval();
    const auto first = random_ids(2, 4), second = random_ids(2, 4), targets = random_ids(2, 4);
    const auto fresh = [&](const LmMemory& memory) {  // nothing reused
      return model(second, targets, LmMemory{memory.layers, {}}).nll;
    };
    torch::NoGradGuard no_grad;
    const auto a = model(first, targets, LmMemory{});
    ASSERT_EQ(a.memory.reusable.size(), 2u);
    EXPECT_TRUE(a.memory.reusable[0].source.is_same(a.memory.layers[0]));
    const auto b = model(second, targets, a.memory);
    EXPECT_TRUE(at::allclose(b.nll, fresh(a.memory), 1e-5, 1e-6)) << pre_lnorm;
    // A third segment after a reused one (mem_len 6 > T 4: the memory joins kept rows and new ones).
    LmMemory computed_again;
    {
      at::AutoGradMode grad(true);  // nothing reused in between
      computed_again = model(second, targets, LmMemory{a.memory.layers, {}}).memory;
    }
    for (int i = 0; i < 2; ++i) EXPECT_TRUE(at::allclose(b.memory.layers[i], computed_again.layers[i], 1e-5, 1e-6));
    EXPECT_TRUE(at::allclose(model(first, targets, b.memory).nll,
                             model(first, targets, LmMemory{computed_again.layers, {}}).nll, 1e-5, 1e-6));
    // Rows selected: the kept keys and values no longer belong to these tensors.
    LmMemory reordered = a.memory;
    for (auto& layer : reordered.layers) layer = layer.flip(0);
    EXPECT_TRUE(at::allclose(model(second, targets, reordered).nll, fresh(reordered), 1e-5, 1e-6));
    // Weights changed in place (an optimizer step): computed again.
    for (auto& p : model->parameters()) p.add_(0.05);
    EXPECT_TRUE(at::allclose(model(second, targets, a.memory).nll, fresh(a.memory), 1e-5, 1e-6)) << pre_lnorm;
  }
  // Training keeps nothing to reuse.
  TransformerXlModel model(small_xl_config(), kXlVocab);
  EXPECT_TRUE(model(random_ids(2, 4), random_ids(2, 4), LmMemory{}).memory.reusable.empty());
}

// Generation feeds one token at a time with the memory; it must score as the whole segment does.
TEST(TransformerXl, LogProbsOneTokenAtATimeMatchTheSegmentsNll) {
  at::manual_seed(4);
  auto config = small_xl_config();
  config.mem_len = 20;
  TransformerXlModel model(config, kXlVocab);
  model->eval();
  torch::NoGradGuard no_grad;
  const auto tokens = random_ids(2, 5), targets = random_ids(2, 5);
  const auto whole = model(tokens, targets, LmMemory{});
  LmMemory memory;
  for (int64_t t = 0; t < 5; ++t) {
    auto step = model->log_probs(tokens.slice(1, t, t + 1), memory);  // [2, 1, V]
    EXPECT_TRUE(at::allclose(step.log_probs.exp().sum(-1), at::ones({2, 1}), 1e-5, 1e-5));
    const auto nll = -step.log_probs.squeeze(1).gather(1, targets.slice(1, t, t + 1)).squeeze(1);
    EXPECT_TRUE(at::allclose(nll, whole.nll.select(1, t), 1e-5, 1e-6)) << "position " << t;
    memory = std::move(step.memory);
  }
}

TEST(TransformerXl, PaddingTargetsHaveNoLoss) {
  TransformerXlModel model(small_xl_config(), kXlVocab);
  auto targets = random_ids(2, 3);
  targets[1][2] = kPadId;
  const auto out = model(random_ids(2, 3), targets, LmMemory{});
  EXPECT_EQ(out.nll[1][2].item<float>(), 0.0f);
  EXPECT_GT(out.nll[1][1].item<float>(), 0.0f);
}

// tie_weight: the softmax's output vectors are the embedding's tensors (one parameter, one
// gradient); tie_projs: so are the tail clusters' projections.
TEST(TransformerXl, TiedWeightsAreOneTensorWithOneGradient) {
  at::manual_seed(5);
  TransformerXlModel model(small_xl_config(), kXlVocab);
  const auto embedding = model->embedding();
  const auto softmax = model->softmax();
  for (int64_t i = 0; i < 3; ++i) EXPECT_TRUE(softmax->weight(i).is_same(embedding->weight(i)));
  for (int64_t i = 1; i < 3; ++i) EXPECT_TRUE(softmax->projection(i).is_same(embedding->projection(i)));
  int64_t listed = 0;
  for (const auto& p : model->parameters()) listed += p.is_same(embedding->weight(0));
  EXPECT_EQ(listed, 1);
  model(random_ids(2, 6), random_ids(2, 6), LmMemory{}).nll.sum().backward();
  EXPECT_TRUE(softmax->weight(0).grad().defined());
  EXPECT_TRUE(softmax->weight(0).grad().is_same(embedding->weight(0).grad()));
  auto untied = small_xl_config();
  untied.tie_weight = untied.tie_projs = false;
  TransformerXlModel other(untied, kXlVocab);
  EXPECT_FALSE(other->softmax()->weight(0).is_same(other->embedding()->weight(0)));
  EXPECT_GT(count_parameters(*other), count_parameters(*model));
}

// The reference's weights_init: LayerNorm weights around 1, biases 0, projections N(0, 0.01),
// other weights N(0, 0.02) or U(-0.1, 0.1).
TEST(TransformerXl, InitialisesAsTheReferencesTrainPy) {
  at::manual_seed(6);
  auto config = small_xl_config();
  config.d_model = 64;
  config.d_inner = 256;
  config.d_embed = 128;
  TransformerXlModel model(config, kXlVocab);
  for (const auto& item : model->named_parameters()) {
    const auto& name = item.key();
    const auto& p = item.value();
    if (name.find("layer_norm.weight") != std::string::npos) {
      EXPECT_NEAR(p.mean().item<double>(), 1.0, 0.01) << name;
    } else if (name.find("bias_") != std::string::npos || name.find("cluster_bias") != std::string::npos ||
               name.substr(name.size() - 5) == ".bias") {
      EXPECT_EQ(p.abs().max().item<double>(), 0.0) << name;
    } else if (name.find("projection_") != std::string::npos) {
      EXPECT_NEAR(p.std().item<double>(), 0.01, 0.002) << name;
    } else if (p.numel() > 100) {
      EXPECT_NEAR(p.std().item<double>(), 0.02, 0.004) << name;
    }
  }
  config.init = "uniform";
  TransformerXlModel uniform(config, kXlVocab);
  const auto w = uniform->embedding()->weight(0);
  EXPECT_LE(w.abs().max().item<double>(), 0.1);
  EXPECT_GT(w.abs().max().item<double>(), 0.09);
}

TEST(TransformerXl, RunsUnderBf16Autocast) {
  at::manual_seed(7);
  TransformerXlModel model(small_xl_config(), kXlVocab);
  model->eval();
  torch::NoGradGuard no_grad;
  const auto tokens = random_ids(2, 4), targets = random_ids(2, 4);
  const auto fp32 = model(tokens, targets, LmMemory{});
  const test::CpuAutocast autocast;
  const auto bf16 = model(tokens, targets, LmMemory{});
  EXPECT_EQ(bf16.nll.scalar_type(), at::kFloat);
  EXPECT_TRUE(at::allclose(bf16.nll, fp32.nll, 0.05, 0.05));
  const auto again = model(tokens, targets, bf16.memory);  // a bf16 memory feeds the next segment
  EXPECT_TRUE(at::isfinite(again.nll).all().item<bool>());
}

TEST(TransformerXl, ContextAndConfigErrorsSayWhatIsWrong) {
  TransformerXlModel model(small_xl_config(), kXlVocab);
  EXPECT_EQ(error_of([&] { model->set_context({0, -1, true}); }),
            "model.transformer_xl.same_length needs mem_len > 0: it limits every query to the last mem_len keys, "
            "and with mem_len 0 no query would see any");
  EXPECT_EQ(error_of([&] { model->set_context({-1, -1, false}); }),
            "model.transformer_xl.mem_len must be at least 0 (0 = no memory), got -1");
  model->set_context({640, 400, true});
  EXPECT_EQ(model->context().mem_len, 640);
  EXPECT_EQ(model->context().clamp_len, 400);
  EXPECT_TRUE(model->context().same_length);
  const auto memory = model(random_ids(2, 3), random_ids(2, 3), LmMemory{}).memory;
  EXPECT_EQ(error_of([&] { model(random_ids(3, 3), random_ids(3, 3), memory); }),
            "TransformerXlModel: every memory tensor must be [B = 3, M = 3, D = 12], got [2, 3, 12]; pass the memory "
            "that the previous segment of the same rows returned");
  EXPECT_EQ(error_of([&] { model(at::full({2, 3}, kXlVocab, at::kLong), random_ids(2, 3), LmMemory{}); }),
            "TransformerXlModel: tokens must be ids in [0, 40), got 40 .. 40");
  auto config = small_xl_config();
  config.d_model = 13;
  EXPECT_EQ(error_of([&] { TransformerXlModel bad(config, kXlVocab); }),
            "model.transformer_xl.d_model must be even (half of the positional embedding holds sines, half "
            "cosines), got 13");
  config = small_xl_config();
  config.cutoffs = {10, 50};
  EXPECT_EQ(error_of([&] { TransformerXlModel bad(config, kXlVocab); }),
            "model.transformer_xl.cutoffs must increase strictly between 0 and the vocabulary size 40 (exclusive), "
            "got 50 after 10");
  config = small_xl_config();
  config.dropatt = 1.0;
  EXPECT_EQ(error_of([&] { TransformerXlModel bad(config, kXlVocab); }),
            "model.transformer_xl.dropatt must be in [0, 1), got 1; 0 disables it");
}

}  // namespace
}  // namespace mixseq
