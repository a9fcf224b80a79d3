#include "mixseq/models/transformer.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <unordered_set>
#include <vector>

#include "mixseq/models/registry.h"
#include "mixseq/nn/parameter_count.h"
#include "mixseq/nn/scaled_dot_product_attention.h"
#include "mixseq/nn/sinusoidal_positional_embedding.h"
#include "mixseq/text/vocabulary.h"
#include "mixseq/util/error.h"
#include "model_test_support.h"
#include "test_support.h"
#include "util/torch_compat.h"

namespace mixseq {
namespace {

using test::error_of;

constexpr int64_t kVocab = 50;

TransformerConfig small_config() {
  TransformerConfig config;
  config.embed_dim = 16;
  config.ffn_dim = 32;
  config.heads = 4;
  config.encoder_layers = 2;
  config.decoder_layers = 3;
  config.dropout = 0.1;
  config.attention_dropout = 0.1;
  config.activation_dropout = 0.1;
  return config;
}

torch::Tensor random_tokens(const std::vector<int64_t>& lengths) { return test::random_tokens(lengths, kVocab); }

// Decoder inputs: <s> then random tokens, right-padded to the longest length.
torch::Tensor random_target(const std::vector<int64_t>& lengths) {
  auto target = random_tokens(lengths);
  target.select(1, 0).fill_(kBosId);
  return target;
}

using test::CpuAutocast;

// softmax(q k^T / sqrt(Dh)) v one batch row and head at a time, with the masks written out
// position by position: key s is hidden from query t at padding, and under `causal` when
// s > S - T + t (the queries are the last T of S positions).
std::tuple<torch::Tensor, torch::Tensor> reference_attention(const torch::Tensor& q, const torch::Tensor& k,
                                                             const torch::Tensor& v, const torch::Tensor& pad,
                                                             bool causal) {
  const int64_t b_size = q.size(0), h_size = q.size(1), t_size = q.size(2), s_size = k.size(2);
  auto output = at::zeros_like(q);
  auto weights = at::zeros({b_size, h_size, t_size, s_size});
  for (int64_t b = 0; b < b_size; ++b) {
    for (int64_t h = 0; h < h_size; ++h) {
      auto scores = q[b][h].mm(k[b][h].t()) / std::sqrt(static_cast<double>(q.size(3)));  // [T, S]
      for (int64_t t = 0; t < t_size; ++t) {
        for (int64_t s = 0; s < s_size; ++s) {
          const bool hidden = pad[b][s].item<bool>() || (causal && s > s_size - t_size + t);
          if (hidden) scores[t][s] = -std::numeric_limits<float>::infinity();
        }
      }
      weights[b][h] = at::softmax(scores, 1);
      output[b][h] = weights[b][h].mm(v[b][h]);
    }
  }
  return {output, weights};
}

struct AttentionCase {
  int64_t t;
  int64_t s;
  bool causal;
};

// T = 1 is a decoding step (a broadcast product on the CPU, not bmm).
const AttentionCase kAttentionCases[] = {{4, 5, false}, {5, 5, true}, {2, 5, true}, {1, 5, true}, {1, 5, false}};

TEST(TransformerAttention, PlainMatchesAHandWrittenReference) {
  at::manual_seed(10);
  for (const auto& c : kAttentionCases) {
    const auto q = at::randn({2, 3, c.t, 8});
    const auto k = at::randn({2, 3, c.s, 8});
    const auto v = at::randn({2, 3, c.s, 8});
    auto pad = at::zeros({2, c.s}, at::kBool);
    pad[1].slice(0, c.s - 2).fill_(true);  // row 1: the last 2 keys are padding
    const auto [expected_output, expected_weights] = reference_attention(q, k, v, pad, c.causal);
    const auto [output, weights] = plain_attention(q, k, v, pad, c.causal, /*dropout_p=*/0.0);
    const std::string name = "T=" + std::to_string(c.t) + " S=" + std::to_string(c.s) + " causal=" +
                             std::to_string(c.causal);
    EXPECT_TRUE(at::allclose(output, expected_output, 1e-5, 1e-6)) << name;
    EXPECT_TRUE(at::allclose(weights, expected_weights, 1e-5, 1e-6)) << name;
    EXPECT_TRUE(at::equal(scaled_dot_product_attention(q, k, v, pad, c.causal, 0.0, AttentionKernel::kPlain), output))
        << name;
  }
}

TEST(TransformerAttention, FusedEqualsPlain) {
  if (!compat::has_fused_attention()) {
    GTEST_SKIP() << "this LibTorch (" << TORCH_VERSION_MAJOR << "." << TORCH_VERSION_MINOR
                 << ") has no at::scaled_dot_product_attention; the GPU machine's 2.x build runs this test";
  }
  std::vector<torch::Device> devices = {torch::kCPU};
  if (torch::cuda::is_available()) devices.emplace_back(torch::kCUDA);
  at::manual_seed(11);
  for (const auto& device : devices) {
    for (const auto& c : kAttentionCases) {
      const auto q = at::randn({2, 3, c.t, 8}).to(device);
      const auto k = at::randn({2, 3, c.s, 8}).to(device);
      const auto v = at::randn({2, 3, c.s, 8}).to(device);
      auto pad = at::zeros({2, c.s}, at::kBool);
      pad[1].slice(0, c.s - 2).fill_(true);
      pad = pad.to(device);
      const auto plain = scaled_dot_product_attention(q, k, v, pad, c.causal, 0.0, AttentionKernel::kPlain);
      const auto fused = scaled_dot_product_attention(q, k, v, pad, c.causal, 0.0, AttentionKernel::kAuto);
      EXPECT_TRUE(at::allclose(fused.cpu(), plain.cpu(), 1e-5, 1e-5))
          << device << " T=" << c.t << " S=" << c.s << " causal=" << c.causal;
    }
  }
}

TEST(TransformerPositions, SinesThenCosinesAsFairseq) {
  const int64_t dim = 8, half = 4;
  const auto e = sinusoidal_positional_embedding(0, 6, dim, torch::kCPU);  // [6, 8]
  ASSERT_EQ(e.sizes(), (at::IntArrayRef{6, dim}));
  for (int64_t p = 0; p < 6; ++p) {
    for (int64_t i = 0; i < half; ++i) {
      const double angle = p * std::exp(-std::log(10000.0) * i / (half - 1));
      EXPECT_NEAR(e[p][i].item<double>(), std::sin(angle), 1e-6) << p << " " << i;
      EXPECT_NEAR(e[p][half + i].item<double>(), std::cos(angle), 1e-6) << p << " " << i;
    }
  }
  // A later window is the same rows: step() embeds position t alone.
  EXPECT_TRUE(at::allclose(sinusoidal_positional_embedding(3, 2, dim, torch::kCPU), e.slice(0, 3, 5)));
}

TEST(Transformer, StepByStepEqualsForward) {
  for (const bool normalize_before : {false, true}) {
    at::manual_seed(3);
    auto config = small_config();
    config.normalize_before = normalize_before;
    TransformerModel model(config, kVocab);
    model->eval();
    const std::vector<int64_t> lengths = {6, 2, 4};
    const auto source = random_tokens(lengths);
    const auto source_lengths = at::tensor(lengths, at::kLong);
    const auto target = random_target({7, 7, 7});

    torch::NoGradGuard no_grad;
    const auto expected = model(source, source_lengths, target);  // [3, 7, V]
    auto state = model->start(source, source_lengths);
    const auto mask = dynamic_cast<TransformerState&>(*state).pad_mask;
    for (int64_t t = 0; t < target.size(1); ++t) {
      const auto step = model->step(*state, target.select(1, t));
      ASSERT_EQ(step.logits.sizes(), (at::IntArrayRef{3, kVocab}));
      ASSERT_EQ(step.attention.sizes(), (at::IntArrayRef{3, 6}));
      EXPECT_TRUE(at::allclose(step.logits, expected.select(1, t), 1e-5, 1e-5))
          << "position " << t << " normalize_before " << normalize_before;
      EXPECT_TRUE(at::allclose(step.attention.sum(-1), at::ones({3}), 1e-5, 1e-6));
      EXPECT_TRUE(at::equal(step.attention.masked_select(mask), at::zeros({mask.sum().item<int64_t>()})));
    }
    EXPECT_EQ(dynamic_cast<TransformerState&>(*state).position, 7);
    const auto& self_cache = dynamic_cast<TransformerState&>(*state).self_attention[0];
    EXPECT_EQ(self_cache.length(), 7);
    EXPECT_EQ(self_cache.materialized().keys.sizes(), (at::IntArrayRef{3, 4, 7, 4}));
  }
}

TEST(Transformer, StepAfterSelectEqualsForwardOfTheSelectedRows) {
  at::manual_seed(4);
  TransformerModel model(small_config(), kVocab);
  model->eval();
  const std::vector<int64_t> lengths = {6, 2, 4};
  const auto source = random_tokens(lengths);
  const auto source_lengths = at::tensor(lengths, at::kLong);
  const auto target = random_target({6, 6, 6});

  torch::NoGradGuard no_grad;
  const auto expected = model(source, source_lengths, target);  // [3, 6, V]
  // Before any step (empty caches), then in the middle, repeating, reordering and dropping rows.
  const auto first_rows = at::tensor({2, 0, 1, 1}, at::kLong);   // -> source rows 2, 0, 1, 1
  const auto second_rows = at::tensor({3, 0, 0, 1}, at::kLong);  // -> source rows 1, 2, 2, 0
  auto rows = at::arange(3, at::kLong);                           // source row of each state row
  auto state = model->start(source, source_lengths);
  for (int64_t t = 0; t < target.size(1); ++t) {
    if (t == 0 || t == 3) {
      const auto& selection = t == 0 ? first_rows : second_rows;
      state->select(selection);
      rows = rows.index_select(0, selection);
    }
    const auto step = model->step(*state, target.select(1, t).index_select(0, rows));
    EXPECT_TRUE(at::allclose(step.logits, expected.select(1, t).index_select(0, rows), 1e-5, 1e-5)) << "position " << t;
  }
}

// Beams reordered within their sentences: the encoder's cached keys stay, and nothing changes.
TEST(Transformer, SelectWithinSourcesEqualsSelect) {
  at::manual_seed(6);
  TransformerModel model(small_config(), kVocab);
  model->eval();
  const std::vector<int64_t> lengths = {6, 2, 4};
  const auto source = random_tokens(lengths);
  const auto source_lengths = at::tensor(lengths, at::kLong);
  const auto target = random_target({4, 4, 4}).repeat_interleave(2, 0);  // [6, 4], two beams per sentence

  test::expect_select_within_sources_equals_select(*model, source, source_lengths, target);
}

TEST(Transformer, StepWithoutAttentionGivesTheSameLogits) {
  at::manual_seed(7);
  TransformerModel model(small_config(), kVocab);
  model->eval();
  const std::vector<int64_t> lengths = {5, 3};
  const auto source = random_tokens(lengths);
  const auto source_lengths = at::tensor(lengths, at::kLong);
  const auto target = random_target({3, 3});

  torch::NoGradGuard no_grad;
  auto with = model->start(source, source_lengths), without = model->start(source, source_lengths);
  without->report_attention = false;
  for (int64_t t = 0; t < target.size(1); ++t) {
    const auto a = model->step(*with, target.select(1, t)), b = model->step(*without, target.select(1, t));
    EXPECT_FALSE(b.attention.defined());
    EXPECT_TRUE(at::allclose(a.logits, b.logits, 1e-6, 1e-6)) << "position " << t;
  }
}

TEST(Transformer, SourcePaddingIsNeverAttended) {
  at::manual_seed(5);
  TransformerModel model(small_config(), kVocab);
  model->eval();
  const std::vector<int64_t> lengths = {7, 3, 5};
  const auto source = random_tokens(lengths);
  const auto source_lengths = at::tensor(lengths, at::kLong);
  const auto target = random_target({6, 6, 6});

  torch::NoGradGuard no_grad;
  const auto logits = model(source, source_lengths, target);  // [3, 6, V]
  auto noisy_source = source.clone();
  noisy_source[1].slice(0, 3).fill_(kEosId + 1);
  noisy_source[2].slice(0, 5).fill_(kEosId + 2);
  EXPECT_TRUE(at::allclose(model(noisy_source, source_lengths, target), logits, 1e-6, 1e-6));
  // And a sentence gets the logits it gets alone, without padding.
  const auto alone = model(source.slice(0, 1, 2).slice(1, 0, 3), at::tensor({3}, at::kLong), target.slice(0, 1, 2));
  EXPECT_TRUE(at::allclose(alone[0], logits[1], 1e-5, 1e-5));
}

TEST(Transformer, DecoderSeesNoLaterTargetPosition) {
  at::manual_seed(6);
  TransformerModel model(small_config(), kVocab);
  model->eval();
  const std::vector<int64_t> lengths = {5, 4};
  const auto source = random_tokens(lengths);
  const auto source_lengths = at::tensor(lengths, at::kLong);
  const auto target = random_target({7, 7});

  torch::NoGradGuard no_grad;
  const auto logits = model(source, source_lengths, target);  // [2, 7, V]
  auto changed = target.clone();
  changed.slice(1, 3).fill_(kEosId + 1);  // positions 3.. (differ from the random tokens somewhere)
  changed[0][3] = target[0][3].item<int64_t>() == kEosId + 1 ? kEosId + 2 : kEosId + 1;
  const auto changed_logits = model(source, source_lengths, changed);
  EXPECT_TRUE(at::allclose(changed_logits.slice(1, 0, 3), logits.slice(1, 0, 3), 1e-6, 1e-6));
  EXPECT_FALSE(at::allclose(changed_logits[0][3], logits[0][3], 1e-3, 1e-3));
}

// Parameters by identity, each once.
size_t distinct_parameters_with_data(const torch::nn::Module& module, const void* data) {
  std::unordered_set<const void*> seen;
  size_t count = 0;
  for (const auto& p : module.parameters())
    if (seen.insert(p.unsafeGetTensorImpl()).second && p.data_ptr() == data) ++count;
  return count;
}

TEST(Transformer, ShareAllEmbeddingsIsOneTensorThatGathersAllGradients) {
  at::manual_seed(7);
  auto config = small_config();
  config.dropout = config.attention_dropout = config.activation_dropout = 0.0;
  TransformerModel shared(config, kVocab);
  const auto& weight = shared->encoder_embedding_weight();
  EXPECT_EQ(shared->decoder_embedding_weight().data_ptr(), weight.data_ptr());
  EXPECT_EQ(shared->output_projection_weight().data_ptr(), weight.data_ptr());
  EXPECT_EQ(distinct_parameters_with_data(*shared, weight.data_ptr()), 1u);
  const auto named = shared->named_parameters();
  EXPECT_NE(named.find("embedding.weight"), nullptr);
  const auto params = shared->parameters();
  const auto is_weight = [&](const torch::Tensor& p) { return p.is_same(weight); };
  EXPECT_EQ(std::count_if(params.begin(), params.end(), is_weight), 1);  // listed once, so optimized once

  // The same model with three separate copies of the matrix: the shared gradient is their sum.
  config.share_all_embeddings = false;
  config.share_decoder_input_output_embed = false;
  TransformerModel untied(config, kVocab);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : untied->named_parameters()) {
      const auto* source = named.find(p.key());
      p.value().copy_(source != nullptr ? *source : weight);  // the three matrices are the only new names
    }
  }
  const auto source = random_tokens({5, 3});
  const auto source_lengths = at::tensor({5, 3}, at::kLong);
  const auto target = random_target({4, 4});
  const auto gold = random_tokens({4, 4});
  const auto loss_of = [&](TransformerModel& model) {
    const auto logits = model(source, source_lengths, target);  // [2, 4, V]
    return at::cross_entropy_loss(logits.reshape({-1, kVocab}), gold.reshape(-1));
  };
  const auto shared_loss = loss_of(shared);
  const auto untied_loss = loss_of(untied);
  EXPECT_NEAR(shared_loss.item<double>(), untied_loss.item<double>(), 1e-5);
  shared_loss.backward();
  untied_loss.backward();
  const auto untied_named = untied->named_parameters();
  const auto& encoder_grad = untied_named["encoder_embedding.weight"].grad();
  const auto& decoder_grad = untied_named["decoder_embedding.weight"].grad();
  const auto& output_grad = untied_named["output_projection.weight"].grad();
  for (const auto* grad : {&encoder_grad, &decoder_grad, &output_grad})
    EXPECT_GT(grad->abs().sum().item<double>(), 0.0);  // each path carries gradient
  EXPECT_TRUE(at::allclose(weight.grad(), encoder_grad + decoder_grad + output_grad, 1e-5, 1e-7));
}

TEST(Transformer, ShareDecoderInputOutputEmbed) {
  auto config = small_config();
  config.share_all_embeddings = false;
  TransformerModel model(config, kVocab);
  EXPECT_EQ(model->output_projection_weight().data_ptr(), model->decoder_embedding_weight().data_ptr());
  EXPECT_NE(model->encoder_embedding_weight().data_ptr(), model->decoder_embedding_weight().data_ptr());
  const auto named = model->named_parameters();
  EXPECT_NE(named.find("encoder_embedding.weight"), nullptr);
  EXPECT_NE(named.find("decoder_embedding.weight"), nullptr);
  EXPECT_EQ(named.find("output_projection.weight"), nullptr);
}

TEST(Transformer, ParameterCountMatchesTheFormula) {
  // D = 16, F = 32, V = 50, 2 encoder and 3 decoder layers:
  //   attention      q, k, v, out: 4 x (D*D + D)                = 4 x 272        = 1,088
  //   FFN            fc1 D*F + F, fc2 F*D + D                   = 544 + 528      = 1,072
  //   LayerNorm      2D                                                          =    32
  //   encoder layer  attention + FFN + 2 LayerNorms             = 1,088 + 1,072 + 64 = 2,224
  //   decoder layer  2 attentions + FFN + 3 LayerNorms          = 2,176 + 1,072 + 96 = 3,344
  //   embedding      V*D                                                         =   800
  //   shared, post-norm: 800 + 2 x 2,224 + 3 x 3,344                             = 15,280
  const int64_t d = 16, f = 32, v = kVocab;
  const int64_t attention = 4 * (d * d + d), ffn = d * f + f + f * d + d, layer_norm = 2 * d;
  const int64_t encoder_layer = attention + ffn + 2 * layer_norm;
  const int64_t decoder_layer = 2 * attention + ffn + 3 * layer_norm;
  const int64_t shared = v * d + 2 * encoder_layer + 3 * decoder_layer;
  ASSERT_EQ(shared, 15280);

  auto config = small_config();
  EXPECT_EQ(count_parameters(*TransformerModel(config, kVocab)), 15280);
  config.normalize_before = true;  // + the final LayerNorms of encoder and decoder
  EXPECT_EQ(count_parameters(*TransformerModel(config, kVocab)), 15280 + 2 * layer_norm);
  config.normalize_before = false;
  config.share_all_embeddings = false;  // + a decoder embedding, tied to the output projection
  EXPECT_EQ(count_parameters(*TransformerModel(config, kVocab)), 15280 + v * d);
  config.share_decoder_input_output_embed = false;  // + an output projection (no bias)
  EXPECT_EQ(count_parameters(*TransformerModel(config, kVocab)), 15280 + 2 * v * d);
}

TEST(Transformer, InitializesAsFairseq) {
  at::manual_seed(8);
  auto config = small_config();
  config.embed_dim = 64;
  config.heads = 4;
  TransformerModel model(config, 2000);
  const auto& embedding = model->encoder_embedding_weight();
  EXPECT_TRUE(at::equal(embedding[kPadId], at::zeros({64})));
  EXPECT_NEAR(embedding.slice(0, 1).std().item<double>(), 1.0 / 8.0, 0.005);  // 64^-1/2
  for (const auto& p : model->named_parameters()) {
    const auto& name = p.key();
    if (name.find("layer_norm.weight") != std::string::npos) {
      EXPECT_TRUE(at::equal(p.value(), at::ones_like(p.value()))) << name;
    } else if (name.find("bias") != std::string::npos) {
      EXPECT_TRUE(at::equal(p.value(), at::zeros_like(p.value()))) << name;
    } else if (name.find("fc1.weight") != std::string::npos) {
      const double bound = std::sqrt(6.0 / (64 + 32));  // xavier_uniform, gain 1
      EXPECT_LE(p.value().abs().max().item<double>(), bound) << name;
      EXPECT_GT(p.value().abs().max().item<double>(), 0.9 * bound) << name;
    } else if (name.find("q_proj.weight") != std::string::npos) {
      const double bound = std::sqrt(6.0 / (64 + 64)) / std::sqrt(2.0);  // gain 1/sqrt(2)
      EXPECT_LE(p.value().abs().max().item<double>(), bound) << name;
      EXPECT_GT(p.value().abs().max().item<double>(), 0.9 * bound) << name;
    }
  }
}

TEST(Transformer, PreNormAndPostNormBothRunAndDiffer) {
  const auto source = random_tokens({5, 3});
  const auto source_lengths = at::tensor({5, 3}, at::kLong);
  const auto target = random_target({4, 4});
  torch::Tensor logits[2];
  for (const bool normalize_before : {false, true}) {
    at::manual_seed(9);  // the same weights: the final LayerNorms draw no random numbers
    auto config = small_config();
    config.normalize_before = normalize_before;
    TransformerModel model(config, kVocab);
    model->eval();
    const auto names = model->named_parameters().keys();
    const bool has_final_norm = std::find(names.begin(), names.end(), "decoder_layer_norm.weight") != names.end();
    EXPECT_EQ(has_final_norm, normalize_before);
    torch::NoGradGuard no_grad;
    logits[normalize_before] = model(source, source_lengths, target);
    ASSERT_EQ(logits[normalize_before].sizes(), (at::IntArrayRef{2, 4, kVocab}));
    EXPECT_TRUE(at::isfinite(logits[normalize_before]).all().item<bool>());
  }
  EXPECT_GT((logits[0] - logits[1]).abs().max().item<double>(), 1e-2);
}

TEST(Transformer, RejectsInvalidConfigWithTheValue) {
  const auto message = [](const TransformerConfig& config, int64_t vocab = kVocab) {
    return error_of([&] { TransformerModel(config, vocab); });
  };
  auto config = small_config();
  config.embed_dim = 18;  // heads 4
  EXPECT_NE(message(config).find("model.transformer.embed_dim (18) must be a positive multiple of "
                                 "model.transformer.heads (4)"),
            std::string::npos);
  config = small_config();
  config.heads = 0;
  EXPECT_NE(message(config).find("model.transformer.heads must be positive, got 0"), std::string::npos);
  config = small_config();
  config.embed_dim = 3;
  config.heads = 1;
  EXPECT_NE(message(config).find("must be even and at least 4"), std::string::npos);
  config = small_config();
  config.ffn_dim = 0;
  EXPECT_NE(message(config).find("model.transformer.ffn_dim must be positive, got 0"), std::string::npos);
  config = small_config();
  config.encoder_layers = 0;
  EXPECT_NE(message(config).find("model.transformer.encoder_layers must be at least 1, got 0"), std::string::npos);
  config = small_config();
  config.decoder_layers = -1;
  EXPECT_NE(message(config).find("model.transformer.decoder_layers must be at least 1, got -1"), std::string::npos);
  config = small_config();
  config.dropout = 1.0;
  EXPECT_NE(message(config).find("model.transformer.dropout must be in [0, 1), got 1"), std::string::npos);
  config = small_config();
  config.attention_dropout = -0.1;
  EXPECT_NE(message(config).find("model.transformer.attention_dropout must be in [0, 1), got -0.1"),
            std::string::npos);
  config = small_config();
  config.activation_dropout = 2;
  EXPECT_NE(message(config).find("model.transformer.activation_dropout must be in [0, 1), got 2"),
            std::string::npos);
  EXPECT_NE(message(small_config(), 3).find("vocabulary size must be at least 4"), std::string::npos);
}

TEST(Transformer, RegistryBuildsTheTransformer) {
  ModelConfig config;
  config.arch = "transformer";
  config.transformer = small_config();
  const auto model = build_seq2seq_model(config, kVocab);
  EXPECT_NE(std::dynamic_pointer_cast<TransformerModelImpl>(model), nullptr);
  EXPECT_EQ(model->vocab_size(), kVocab);
}

TEST(Transformer, StepRejectsAForeignState) {
  struct OtherState : IncrementalState {
    void select(const torch::Tensor&) override {}
  } other;
  TransformerModel model(small_config(), kVocab);
  EXPECT_THROW(model->step(other, at::tensor({kBosId}, at::kLong)), Error);
}

TEST(Transformer, TrainsUnderBf16AutocastOnCpu) {
  at::manual_seed(12);
  TransformerModel model(small_config(), kVocab);
  const std::vector<int64_t> lengths = {6, 2, 4};
  const auto source = random_tokens(lengths);
  const auto source_lengths = at::tensor(lengths, at::kLong);
  const auto target_input = random_target({5, 3, 4});
  const auto target_output = random_tokens({5, 3, 4});

  model->eval();
  const auto fp32_logits = model(source, source_lengths, target_input).detach();
  torch::Tensor bf16_logits;
  {
    CpuAutocast autocast;
    bf16_logits = model(source, source_lengths, target_input).detach();
  }
  EXPECT_EQ(bf16_logits.scalar_type(), at::kBFloat16);
  // bf16 keeps 8 significant bits; a few roundings per layer stay well within this.
  EXPECT_LT((bf16_logits.to(at::kFloat) - fp32_logits).abs().max().item<double>(),
            0.05 * fp32_logits.abs().max().item<double>());

  model->train();
  torch::Tensor logits;
  {
    CpuAutocast autocast;
    logits = model(source, source_lengths, target_input);
  }
  const auto loss = at::cross_entropy_loss(logits.to(at::kFloat).reshape({-1, kVocab}), target_output.reshape(-1),
                                           /*weight=*/{}, at::Reduction::Mean, /*ignore_index=*/kPadId);
  ASSERT_TRUE(std::isfinite(loss.item<double>()));
  loss.backward();
  for (const auto& p : model->named_parameters()) {
    EXPECT_EQ(p.value().scalar_type(), at::kFloat) << p.key();
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    EXPECT_EQ(p.value().grad().scalar_type(), at::kFloat) << p.key();
    EXPECT_TRUE(at::isfinite(p.value().grad()).all().item<bool>()) << p.key();
  }
}

}  // namespace
}  // namespace mixseq
