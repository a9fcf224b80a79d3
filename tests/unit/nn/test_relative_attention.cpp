// Transformer-XL's relative attention blocks: the relative shift against an explicit loop and
// against the reference's pad-and-reshape, the sinusoids of the distances, the attention
// against its formula written out position by position, the memory against attending over the
// concatenated sequence, and gradients against finite differences.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

#include "gradient_check.h"
#include "mixseq/nn/relative_multihead_attention.h"
#include "mixseq/nn/relative_positional_embedding.h"
#include "mixseq/nn/relative_shift.h"
#include "mixseq/nn/transformer_xl_layer.h"

namespace mixseq {
namespace {

// The query/key sizes the shift must handle: one query, no memory, memory longer and shorter than
// the segment.
const std::vector<std::pair<int64_t, int64_t>> kShapes = {{1, 1}, {1, 6}, {4, 4}, {4, 9}, {5, 7}, {3, 4}};

TEST(RelativeShift, EqualsAnExplicitLoopInsideTheBand) {
  at::manual_seed(1);
  for (const auto& [t, k] : kShapes) {
    const auto x = at::randn({2, 3, t, k});  // [.., T, K]: column c is distance K - 1 - c
    const auto y = relative_shift(x);
    ASSERT_EQ(y.sizes(), x.sizes());
    const int64_t m = k - t;
    for (int64_t i = 0; i < t; ++i)
      for (int64_t j = 0; j <= m + i; ++j)  // query i (position M + i) and the keys it may see
        EXPECT_TRUE(at::equal(y.select(-2, i).select(-1, j), x.select(-2, i).select(-1, j + t - 1 - i)))
            << "T " << t << " K " << k << " i " << i << " j " << j;
  }
}

// RelMultiHeadAttn._rel_shift of kimiyoung/transformer-xl on its [T, K, ...] layout: pad a zero
// column in front, read the [T, K + 1] matrix as [K + 1, T], drop the first row.
torch::Tensor reference_rel_shift(const torch::Tensor& x) {  // [T, K, B, H]
  const auto zero_pad = at::zeros({x.size(0), 1, x.size(2), x.size(3)}, x.options());
  const auto padded = at::cat({zero_pad, x}, 1).view({x.size(1) + 1, x.size(0), x.size(2), x.size(3)});
  return padded.slice(0, 1).view_as(x);
}

TEST(RelativeShift, EqualsTheReferencesPadAndReshapeInsideTheBand) {
  at::manual_seed(2);
  for (const auto& [t, k] : kShapes) {
    const auto x = at::randn({2, 3, t, k});                                       // [B, H, T, K]
    const auto theirs = reference_rel_shift(x.permute({2, 3, 0, 1}).contiguous()).permute({2, 3, 0, 1});
    const auto band = at::ones({t, k}, at::kBool).triu(k - t + 1).logical_not();  // keys each query may see
    EXPECT_TRUE(at::equal(relative_shift(x).masked_select(band), theirs.masked_select(band))) << t << " " << k;
  }
}

TEST(RelativeShift, GradientsMatchFiniteDifferences) {
  at::manual_seed(3);
  const auto options = at::TensorOptions().dtype(at::kDouble);
  for (const auto& [t, k] : kShapes) {
    const auto x = at::randn({2, t, k}, options).requires_grad_();
    const auto weighting = at::randn({2, t, k}, options);
    test::expect_gradients_match_finite_differences([&] { return (relative_shift(x) * weighting).sum(); },
                                                    {{"x", x}});
  }
}

TEST(RelativeShift, AddedToTheContentScoresInOnePass) {
  at::manual_seed(4);
  const auto options = at::TensorOptions().dtype(at::kDouble);
  for (const auto& [t, k] : kShapes) {
    const auto content = at::randn({2, t, k}, options).requires_grad_();
    const auto position = at::randn({2, t, k}, options).requires_grad_();
    EXPECT_TRUE(at::equal(add_relative_shift(content, position), content + relative_shift(position)));
    const auto weighting = at::randn({2, t, k}, options);
    test::expect_gradients_match_finite_differences(
        [&] { return (add_relative_shift(content, position) * weighting).sum(); },
        {{"content", content}, {"position", position}});
  }
}

TEST(RelativePositionalEmbedding, SinesThenCosinesOfTheDistancesFromFarthestToNearest) {
  const int64_t keys = 6, dim = 8;
  const auto e = relative_positional_embedding(keys, dim, /*clamp_len=*/-1, torch::kCPU);
  ASSERT_EQ(e.sizes(), (std::vector<int64_t>{keys, dim}));
  for (int64_t row = 0; row < keys; ++row) {
    const double distance = static_cast<double>(keys - 1 - row);
    for (int64_t i = 0; i < dim / 2; ++i) {
      const double angle = distance / std::pow(10000.0, 2.0 * static_cast<double>(i) / dim);
      EXPECT_NEAR(e[row][i].item<double>(), std::sin(angle), 1e-6);
      EXPECT_NEAR(e[row][dim / 2 + i].item<double>(), std::cos(angle), 1e-6);
    }
  }
  // clamp_len 2: distances 5, 4, 3 use distance 2's embedding; 0 clamps nothing.
  const auto clamped = relative_positional_embedding(keys, dim, /*clamp_len=*/2, torch::kCPU);
  for (int64_t row = 0; row < 3; ++row) EXPECT_TRUE(at::equal(clamped[row], e[3])) << row;
  EXPECT_TRUE(at::equal(clamped.slice(0, 3), e.slice(0, 3)));  // distances 2, 1, 0 unchanged
  EXPECT_TRUE(at::equal(relative_positional_embedding(keys, dim, 0, torch::kCPU), e));
}

constexpr int64_t kBatch = 2, kWidth = 8, kHeads = 2, kHeadWidth = 3;

RelativeMultiheadAttention make_attention() {
  RelativeMultiheadAttentionOptions options;
  options.d_model = kWidth;
  options.n_head = kHeads;
  options.d_head = kHeadWidth;
  RelativeMultiheadAttention attention(options);
  attention->eval();
  return attention;
}

// The attention of `segment`'s queries over the keys and values of `context`.
torch::Tensor attend(RelativeMultiheadAttention& attention, const torch::Tensor& segment, const torch::Tensor& context,
                     const torch::Tensor& r, const torch::Tensor& u, const torch::Tensor& v,
                     const torch::Tensor& blocked) {
  return attention(segment, attention->project_key_value(context), r, u, v, blocked);
}

// [T, K] bool: query i (position K - T + i) must not see later keys.
torch::Tensor causal(int64_t t, int64_t k) { return at::ones({t, k}, at::kBool).triu(k - t + 1); }

// Dai et al. 2019, §3.3, one batch row, head, query and key at a time:
//   score(i, j) = ((q_i + u) . k_j + (q_i + v) . r_(pos(i) - j)) / sqrt(Dh), masked, softmax, sum of v_j.
torch::Tensor explicit_attention(RelativeMultiheadAttentionImpl& attention, const torch::Tensor& context, int64_t t,
                                 const torch::Tensor& u, const torch::Tensor& v, int64_t clamp_len) {
  const int64_t b_count = context.size(0), k_count = context.size(1), m = k_count - t;
  const auto params = attention.named_parameters();
  const auto qkv = at::linear(context, params["qkv_net.weight"]).view({b_count, k_count, 3, kHeads, kHeadWidth});
  const auto sinusoids = relative_positional_embedding(k_count, kWidth, clamp_len, torch::kCPU).flip(0);  // distance d at row d
  const auto r = at::linear(sinusoids, params["r_net.weight"]).view({k_count, kHeads, kHeadWidth});
  auto out = at::zeros({b_count, t, kHeads, kHeadWidth});
  for (int64_t b = 0; b < b_count; ++b)
    for (int64_t h = 0; h < kHeads; ++h)
      for (int64_t i = 0; i < t; ++i) {
        const auto q = qkv[b][m + i][0][h];
        std::vector<double> scores;
        for (int64_t j = 0; j <= m + i; ++j)
          scores.push_back(((q + u[h]).dot(qkv[b][j][1][h]) + (q + v[h]).dot(r[m + i - j][h])).item<double>() /
                           std::sqrt(static_cast<double>(kHeadWidth)));
        const auto weights = at::softmax(at::tensor(scores, at::kDouble), 0).to(at::kFloat);
        for (int64_t j = 0; j <= m + i; ++j) out[b][i][h] += weights[j] * qkv[b][j][2][h];
      }
  return at::linear(out.view({b_count, t, kHeads * kHeadWidth}), params["o_net.weight"]);  // [B, T, D]
}

TEST(RelativeMultiheadAttention, EqualsItsFormulaWrittenOut) {
  at::manual_seed(4);
  auto attention = make_attention();
  const auto u = at::randn({kHeads, kHeadWidth}), v = at::randn({kHeads, kHeadWidth});
  for (const auto& [t, k] : std::vector<std::pair<int64_t, int64_t>>{{4, 4}, {3, 7}, {1, 5}}) {
    for (const int64_t clamp_len : {-1, 2}) {
      const auto context = at::randn({kBatch, k, kWidth});
      const auto r = relative_positional_embedding(k, kWidth, clamp_len, torch::kCPU);
      const auto ours = attend(attention, context.slice(1, k - t), context, r, u, v, causal(t, k));
      EXPECT_TRUE(at::allclose(ours, explicit_attention(*attention, context, t, u, v, clamp_len), 1e-4, 1e-5))
          << "T " << t << " K " << k << " clamp_len " << clamp_len;
    }
  }
}

// The segment after a memory of M positions attends exactly as the last T queries of the whole
// sequence [memory; segment] with a causal mask: same keys, same distances.
TEST(RelativeMultiheadAttention, MemoryEqualsAttendingOverTheConcatenatedSequence) {
  at::manual_seed(5);
  auto attention = make_attention();
  const auto u = at::randn({kHeads, kHeadWidth}), v = at::randn({kHeads, kHeadWidth});
  const int64_t m = 5, t = 3, k = m + t;
  const auto memory = at::randn({kBatch, m, kWidth}), segment = at::randn({kBatch, t, kWidth});
  const auto sequence = at::cat({memory, segment}, 1);  // [B, K, D]
  const auto r = relative_positional_embedding(k, kWidth, -1, torch::kCPU);
  const auto with_memory = attend(attention, segment, sequence, r, u, v, causal(t, k));                   // [B, T, D]
  const auto whole = attend(attention, sequence, sequence, r, u, v, causal(k, k)).slice(1, m);             // [B, T, D]
  EXPECT_TRUE(at::allclose(with_memory, whole, 1e-5, 1e-6));
  // Without the memory the segment's queries see other keys at other distances.
  const auto alone = attend(attention, segment, segment, relative_positional_embedding(t, kWidth, -1, torch::kCPU), u, v,
                            causal(t, t));
  EXPECT_FALSE(at::allclose(with_memory, alone, 1e-3, 1e-3));
}

TEST(RelativeMultiheadAttention, GradientsMatchFiniteDifferences) {
  at::manual_seed(6);
  auto attention = make_attention();
  attention->to(at::kDouble);
  const auto options = at::TensorOptions().dtype(at::kDouble);
  const int64_t m = 2, t = 3, k = m + t;
  const auto context = at::randn({kBatch, k, kWidth}, options).requires_grad_();
  const auto r = relative_positional_embedding(k, kWidth, -1, torch::kCPU).to(at::kDouble).requires_grad_();
  const auto u = at::randn({kHeads, kHeadWidth}, options).requires_grad_();
  const auto v = at::randn({kHeads, kHeadWidth}, options).requires_grad_();
  const auto weighting = at::randn({kBatch, t, kWidth}, options);
  const auto blocked = causal(t, k);
  const auto loss = [&] { return (attend(attention, context.slice(1, m), context, r, u, v, blocked) * weighting).sum(); };
  std::vector<test::NamedTensor> inputs = {{"context", context}, {"r", r}, {"r_w_bias", u}, {"r_r_bias", v}};
  for (const auto& p : attention->named_parameters()) inputs.push_back({p.key(), p.value()});
  test::expect_gradients_match_finite_differences(loss, inputs);
}

// The fused CPU kernel of nn/relative_attention_core.h and the plain ATen composition compute the
// same outputs and gradients, dropatt included (the same seed draws the same masks), in `dtype`
// over a memory of m and a segment of t, to the tolerances given.
void expect_fused_equals_plain(at::ScalarType dtype, int64_t m, int64_t t, double output_tolerance,
                               double gradient_tolerance) {
  at::manual_seed(9);
  RelativeMultiheadAttentionOptions options;
  options.d_model = kWidth;
  options.n_head = kHeads;
  options.d_head = kHeadWidth;
  options.dropatt = 0.3;
  RelativeMultiheadAttention fused(options);
  options.kernel = AttentionKernel::kPlain;
  RelativeMultiheadAttention plain(options);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : plain->named_parameters()) p.value().copy_(fused->named_parameters()[p.key()]);
  }
  fused->to(dtype);
  plain->to(dtype);
  const auto like = at::TensorOptions().dtype(dtype);
  const int64_t k = m + t;
  const auto context = at::randn({kBatch, k, kWidth}, like);
  const auto r = relative_positional_embedding(k, kWidth, -1, torch::kCPU).to(dtype);
  const auto u = at::randn({kHeads, kHeadWidth}, like), v = at::randn({kHeads, kHeadWidth}, like);
  const auto weighting = at::randn({kBatch, t, kWidth}, like);
  for (const bool training : {false, true}) {
    fused->train(training);
    plain->train(training);
    std::vector<torch::Tensor> outputs, gradients;
    for (auto* attention : {&fused, &plain}) {
      const auto x = context.clone().requires_grad_();
      at::manual_seed(10);
      const auto out = attend(*attention, x.slice(1, m), x, r, u, v, causal(t, k));
      (out * weighting).sum().backward();
      outputs.push_back(out.detach());
      gradients.push_back(x.grad());
      for (auto& p : (*attention)->parameters()) gradients.push_back(p.grad().clone()), p.mutable_grad().reset();
    }
    EXPECT_TRUE(at::allclose(outputs[0], outputs[1], output_tolerance, output_tolerance))
        << training << " " << (outputs[0] - outputs[1]).abs().max();
    const size_t half = gradients.size() / 2;
    for (size_t i = 0; i < half; ++i) {
      EXPECT_TRUE(at::allclose(gradients[i], gradients[half + i], gradient_tolerance, gradient_tolerance))
          << training << " " << i << " " << (gradients[i] - gradients[half + i]).abs().max();
    }
  }
}

TEST(RelativeMultiheadAttention, FusedKernelEqualsThePlainOne) {
  expect_fused_equals_plain(at::kDouble, 4, 3, 1e-12, 1e-10);
}

// In fp32 the scores' shift, mask and softmax run in one sweep of each row (nn/softmax_rows.h's
// masked_softmax_row, its own exp): the same values to fp32 rounding. Rows of 37 keys leave tails
// after the 16-lane loops.
TEST(RelativeMultiheadAttention, FusedKernelEqualsThePlainOneInFp32) {
  expect_fused_equals_plain(at::kFloat, 21, 16, 2e-6, 2e-5);
}

// The layer is the reference's: post-norm LN(x + Attn), LN(y + FFN(y)); pre_lnorm normalises the
// whole context (memory too) before the attention and y before the FFN.
TEST(TransformerXlLayer, ComposesAttentionAndFeedForwardAsTheReference) {
  at::manual_seed(7);
  const int64_t m = 2, t = 3, k = m + t, inner = 5;
  const auto context = at::randn({kBatch, k, kWidth});
  const auto r = relative_positional_embedding(k, kWidth, -1, torch::kCPU);
  const auto u = at::randn({kHeads, kHeadWidth}), v = at::randn({kHeads, kHeadWidth});
  for (const bool pre_lnorm : {false, true}) {
    TransformerXlLayerOptions options;
    options.d_model = kWidth;
    options.n_head = kHeads;
    options.d_head = kHeadWidth;
    options.d_inner = inner;
    options.pre_lnorm = pre_lnorm;
    TransformerXlLayer layer(options);
    layer->eval();
    auto p = layer->named_parameters();
    {
      torch::NoGradGuard no_grad;
      for (auto& item : p)
        if (item.key().find("layer_norm") != std::string::npos) item.value().uniform_(0.5, 1.5);
    }
    const auto norm = [&](const std::string& name, const torch::Tensor& x) {
      return at::layer_norm(x, {kWidth}, p[name + ".weight"], p[name + ".bias"]);
    };
    const auto ffn = [&](const torch::Tensor& x) {
      return at::linear(at::relu(at::linear(x, p["fc1.weight"], p["fc1.bias"])), p["fc2.weight"], p["fc2.bias"]);
    };
    RelativeMultiheadAttention attention(
        std::dynamic_pointer_cast<RelativeMultiheadAttentionImpl>(layer->named_children()["attn"]));
    const auto x = context.slice(1, m);
    torch::Tensor expected;
    if (pre_lnorm) {
      const auto y = x + attend(attention, norm("attn_layer_norm", x), norm("attn_layer_norm", context), r, u, v, causal(t, k));
      expected = y + ffn(norm("ff_layer_norm", y));
    } else {
      const auto y = norm("attn_layer_norm", x + attend(attention, x, context, r, u, v, causal(t, k)));
      expected = norm("ff_layer_norm", y + ffn(y));
    }
    torch::Tensor key_value;
    EXPECT_TRUE(at::allclose(layer->forward(x, context, r, u, v, causal(t, k), at::Tensor(), &key_value), expected, 1e-5, 1e-6))
        << pre_lnorm;
    // The memory's keys and values kept from before give the same result without the context.
    EXPECT_TRUE(at::allclose(layer->forward(x, at::Tensor(), r, u, v, causal(t, k), key_value.slice(1, 0, m)), expected, 1e-5,
                             1e-6))
        << pre_lnorm;
    EXPECT_EQ(layer->key_value_version(), layer->key_value_version());
    const int64_t before = layer->key_value_version();
    {
      torch::NoGradGuard no_grad;
      p[pre_lnorm ? "attn_layer_norm.weight" : "attn.qkv_net.weight"].add_(1.0);
    }
    EXPECT_NE(layer->key_value_version(), before);
  }
}

}  // namespace
}  // namespace mixseq
