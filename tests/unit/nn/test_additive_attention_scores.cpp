// additive_attention_scores against the unfused expression (values and gradients, fp32 and
// bf16 inputs, shapes that split into several blocks and tasks) and against finite differences.
#include "mixseq/nn/additive_attention_scores.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <tuple>

#include "gradient_check.h"

namespace mixseq {
namespace {

struct Inputs {
  torch::Tensor query, keys, v;
};

Inputs random_inputs(int64_t B, int64_t T, int64_t S, int64_t D, at::ScalarType dtype) {
  auto options = at::TensorOptions().dtype(dtype);
  return {at::randn({B, T, D}, options).requires_grad_(), at::randn({B, S, D}, options).requires_grad_(),
          at::randn({D}, options).requires_grad_()};
}

// The scores and the three gradients of sum(scores * weights) for one implementation.
std::tuple<torch::Tensor, torch::Tensor, torch::Tensor, torch::Tensor> run(
    const Inputs& in, const torch::Tensor& weights,
    torch::Tensor (*scores_of)(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&)) {
  for (const auto& x : {in.query, in.keys, in.v})
    if (x.grad().defined()) x.mutable_grad().zero_();
  const auto scores = scores_of(in.query, in.keys, in.v);
  (scores * weights).sum().backward();
  return {scores.detach(), in.query.grad().clone(), in.keys.grad().clone(), in.v.grad().clone()};
}

TEST(AdditiveAttentionScores, EqualsTheUnfusedExpressionWithGradients) {
  at::manual_seed(1);
  // D 300 is not a multiple of the 8 summing lanes; T 70 x S 9 x D 300 makes several blocks per
  // sentence (16,384 elements each), T 1 is a beam step's shape.
  for (const auto& [B, T, S, D] : {std::tuple{3, 70, 9, 300}, std::tuple{5, 1, 4, 16}, std::tuple{2, 3, 1, 7}}) {
    const auto in = random_inputs(B, T, S, D, at::kFloat);
    const auto weights = at::randn({B, T, S});
    const auto [fused, dq, dk, dv] = run(in, weights, additive_attention_scores);
    const auto [unfused, dq_ref, dk_ref, dv_ref] = run(in, weights, additive_attention_scores_reference);
    EXPECT_EQ(fused.scalar_type(), at::kFloat);
    EXPECT_TRUE(at::allclose(fused, unfused, 1e-5, 1e-5)) << (fused - unfused).abs().max();
    EXPECT_TRUE(at::allclose(dq, dq_ref, 1e-4, 1e-5)) << (dq - dq_ref).abs().max();
    EXPECT_TRUE(at::allclose(dk, dk_ref, 1e-4, 1e-5)) << (dk - dk_ref).abs().max();
    EXPECT_TRUE(at::allclose(dv, dv_ref, 1e-4, 1e-4)) << (dv - dv_ref).abs().max();
  }
}

TEST(AdditiveAttentionScores, MatchesFiniteDifferences) {
  at::manual_seed(2);
  const auto in = random_inputs(2, 3, 4, 5, at::kDouble);
  const auto weights = at::randn({2, 3, 4}, at::kDouble);
  test::expect_gradients_match_finite_differences(
      [&] { return (additive_attention_scores(in.query, in.keys, in.v) * weights).sum(); },
      {{"query", in.query}, {"keys", in.keys}, {"v", in.v}});
}

TEST(AdditiveAttentionScores, ComputesBf16InputsInFp32AndReturnsGradientsInTheirDtypes) {
  at::manual_seed(3);
  const auto in = random_inputs(2, 4, 3, 16, at::kBFloat16);
  const auto scores = additive_attention_scores(in.query, in.keys, in.v);
  EXPECT_EQ(scores.scalar_type(), at::kFloat);
  const auto expected = additive_attention_scores_reference(in.query.to(at::kFloat), in.keys.to(at::kFloat),
                                                            in.v.to(at::kFloat));
  EXPECT_TRUE(at::allclose(scores, expected, 1e-5, 1e-5));
  scores.sum().backward();
  EXPECT_EQ(in.query.grad().scalar_type(), at::kBFloat16);
  EXPECT_EQ(in.keys.grad().scalar_type(), at::kBFloat16);
  EXPECT_EQ(in.v.grad().scalar_type(), at::kBFloat16);
}

TEST(AdditiveAttentionScores, RejectsMismatchedShapes) {
  EXPECT_THROW(additive_attention_scores(at::randn({2, 3, 4}), at::randn({2, 5, 6}), at::randn({4})), std::exception);
  EXPECT_THROW(additive_attention_scores(at::randn({2, 3, 4}), at::randn({3, 5, 4}), at::randn({4})), std::exception);
}

}  // namespace
}  // namespace mixseq
