#include "mixseq/nn/bahdanau_attention.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>

#include "gradient_check.h"
#include "mixseq/nn/padding_mask.h"

namespace mixseq {
namespace {

constexpr int64_t kBatch = 3, kQueries = 4, kSource = 5, kQuerySize = 6, kKeySize = 7, kUnits = 8;

BahdanauAttention make_attention() {
  return BahdanauAttention(BahdanauAttentionOptions{kQuerySize, kKeySize, kUnits, /*init_range=*/0.5});
}

torch::Tensor parameter(const BahdanauAttention& attention, const std::string& name) {
  return attention->named_parameters()[name];
}

TEST(BahdanauAttention, MatchesDirectComputationAndMasksPadding) {
  at::manual_seed(1);
  auto attention = make_attention();
  const auto query = at::randn({kBatch, kQueries, kQuerySize});
  const auto keys = at::randn({kBatch, kSource, kKeySize});
  const auto lengths = at::tensor({5, 2, 4}, at::kLong);
  const auto mask = padding_mask(lengths, kSource);
  const auto [context, weights] = attention(query, keys, attention->project_keys(keys), mask);
  ASSERT_EQ(context.sizes(), (at::IntArrayRef{kBatch, kQueries, kKeySize}));
  ASSERT_EQ(weights.sizes(), (at::IntArrayRef{kBatch, kQueries, kSource}));

  // The formula written out position by position with plain ops.
  const auto w_q = parameter(attention, "query_proj.weight"), w_k = parameter(attention, "key_proj.weight");
  const auto v = parameter(attention, "score_v"), g = parameter(attention, "score_g");
  const auto b = parameter(attention, "score_bias");
  const auto v_hat = g * v / v.pow(2).sum().sqrt();
  for (int64_t i = 0; i < kBatch; ++i) {
    const int64_t length = lengths[i].item<int64_t>();
    for (int64_t t = 0; t < kQueries; ++t) {
      std::vector<torch::Tensor> scores;
      for (int64_t s = 0; s < length; ++s)
        scores.push_back((v_hat * at::tanh(at::mv(w_q, query[i][t]) + at::mv(w_k, keys[i][s]) + b)).sum());
      const auto expected_weights = at::softmax(at::stack(scores), 0);  // [length]
      const auto expected_context = at::mv(keys[i].slice(0, 0, length).t(), expected_weights);
      EXPECT_TRUE(at::allclose(weights[i][t].slice(0, 0, length), expected_weights, 1e-5, 1e-6));
      EXPECT_TRUE(at::allclose(context[i][t], expected_context, 1e-5, 1e-6));
      // exp(-inf) is exactly 0: padding gets no weight at all, not a tiny one.
      EXPECT_TRUE(at::equal(weights[i][t].slice(0, length), at::zeros({kSource - length})));
    }
  }
}

TEST(BahdanauAttention, InitializesAsTheReference) {
  auto attention = make_attention();
  EXPECT_TRUE(at::equal(parameter(attention, "score_bias"), at::zeros({kUnits})));
  EXPECT_FLOAT_EQ(parameter(attention, "score_g").item<float>(), 1.0f / std::sqrt(static_cast<float>(kUnits)));
  for (const auto* name : {"query_proj.weight", "key_proj.weight", "score_v"}) {
    const auto p = parameter(attention, name);
    EXPECT_LE(p.abs().max().item<double>(), 0.5) << name;
    EXPECT_GT(p.abs().max().item<double>(), 0.25) << name << " looks not uniform in [-0.5, 0.5]";
  }
  EXPECT_EQ(attention->named_parameters().size(), 5u);  // no biases in the projections
}

TEST(BahdanauAttention, QueriesAreIndependent) {
  // Search feeds one query at a time with the keys projected once; training feeds all at once.
  at::manual_seed(2);
  auto attention = make_attention();
  const auto query = at::randn({kBatch, kQueries, kQuerySize});
  const auto keys = at::randn({kBatch, kSource, kKeySize});
  const auto mask = padding_mask(at::tensor({5, 2, 4}, at::kLong), kSource);
  const auto projected = attention->project_keys(keys);
  const auto [context, weights] = attention(query, keys, projected, mask);
  for (int64_t t = 0; t < kQueries; ++t) {
    const auto [one_context, one_weights] = attention(query.slice(1, t, t + 1), keys, projected, mask);
    EXPECT_TRUE(at::allclose(one_context, context.slice(1, t, t + 1), 1e-5, 1e-6));
    EXPECT_TRUE(at::allclose(one_weights, weights.slice(1, t, t + 1), 1e-5, 1e-6));
  }
}

TEST(BahdanauAttention, GradientsMatchFiniteDifferences) {
  at::manual_seed(3);
  auto attention = make_attention();
  attention->to(at::kDouble);
  const auto options = at::TensorOptions().dtype(at::kDouble);
  const auto query = at::randn({kBatch, kQueries, kQuerySize}, options).requires_grad_();
  const auto keys = at::randn({kBatch, kSource, kKeySize}, options).requires_grad_();
  const auto mask = padding_mask(at::tensor({5, 2, 4}, at::kLong), kSource);
  // Random weightings of both outputs, so that no gradient vanishes by symmetry (the weights
  // of a row sum to 1, so a plain sum of them has zero gradient).
  const auto context_weighting = at::randn({kBatch, kQueries, kKeySize}, options);
  const auto weights_weighting = at::randn({kBatch, kQueries, kSource}, options);
  const auto loss = [&] {
    const auto [context, weights] = attention(query, keys, attention->project_keys(keys), mask);
    return (context * context_weighting).sum() + (weights * weights_weighting).sum();
  };
  std::vector<test::NamedTensor> inputs = {{"query", query}, {"keys", keys}};
  for (const auto& p : attention->named_parameters()) inputs.push_back({p.key(), p.value()});
  test::expect_gradients_match_finite_differences(loss, inputs);
}

}  // namespace
}  // namespace mixseq
