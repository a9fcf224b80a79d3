#include "mixseq/criteria/label_smoothed_cross_entropy.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/types.h>

#include <cmath>
#include <tuple>

#include "mixseq/text/vocabulary.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

double value(const at::Tensor& scalar) { return scalar.item<double>(); }

// Random targets in [1, V) with about a quarter of the positions padded.
at::Tensor random_targets(int64_t batch, int64_t length, int64_t vocab) {
  const auto targets = at::randint(1, vocab, {batch, length}, at::kLong);
  return targets.masked_fill(at::rand({batch, length}).lt(0.25), kPadId);
}

TEST(LabelSmoothedCrossEntropy, MatchesHandComputedTinyExample) {
  // V = 4, logits log(1, 2, 3, 4) give p = (0.1, 0.2, 0.3, 0.4), so
  //   -log p = (2.302585, 1.609438, 1.203973, 0.916291), their mean over V = 1.508072.
  // Targets (3, 1, <pad>), ε = 0.1:
  //   token 1: 0.9 * 0.916291 + 0.1 * 1.508072 = 0.975469
  //   token 2: 0.9 * 1.609438 + 0.1 * 1.508072 = 1.599301
  //   loss = 2.574770, nll = 0.916291 + 1.609438 = 2.525729, tokens = 2.
  // (fairseq's ε/(V-1) form would give 2.591118.) The padded position has extreme logits
  // that would dominate the sums if it were counted.
  const auto row = at::log(torch::tensor({1.0, 2.0, 3.0, 4.0}, at::kFloat));
  const auto logits = at::stack({row, row, torch::tensor({100.0, -100.0, 0.0, 0.0}, at::kFloat)}).unsqueeze(0);
  const auto targets = torch::tensor({{3, 1, static_cast<int>(kPadId)}}, at::kLong);

  const auto smoothed = label_smoothed_cross_entropy(logits, targets, LabelSmoothingOptions{0.1});
  EXPECT_NEAR(value(smoothed.loss), 2.574770, 1e-5);
  EXPECT_NEAR(value(smoothed.nll), 2.525729, 1e-5);
  EXPECT_EQ(smoothed.tokens.item<int64_t>(), 2);

  const auto plain = label_smoothed_cross_entropy(logits, targets, LabelSmoothingOptions{0.0});
  EXPECT_NEAR(value(plain.loss), 2.525729, 1e-5);
  EXPECT_NEAR(value(plain.nll), 2.525729, 1e-5);
}

TEST(LabelSmoothedCrossEntropy, MatchesLibTorchCrossEntropyOnRandomData) {
  at::manual_seed(1);
  const int64_t B = 3, T = 7, V = 11;
  const auto targets = random_targets(B, T, V);
  const auto expected_tokens = targets.ne(kPadId).sum().item<int64_t>();
  for (const double epsilon : {0.0, 0.1, 0.3}) {
    const auto logits = (3.0 * at::randn({B, T, V})).requires_grad_();
    const auto sums = label_smoothed_cross_entropy(logits, targets, LabelSmoothingOptions{epsilon});
    sums.loss.backward();

    // PyTorch's label_smoothing is the same (1 - ε)·nll + ε·mean_v(-log p_v).
    const auto reference_logits = logits.detach().clone().requires_grad_();
    const auto flat_logits = reference_logits.view({B * T, V});
    const auto reference = at::cross_entropy_loss(flat_logits, targets.view({B * T}), {}, at::Reduction::Sum, kPadId, epsilon);
    reference.backward();
    const auto reference_nll = at::cross_entropy_loss(flat_logits.detach(), targets.view({B * T}), {}, at::Reduction::Sum, kPadId);

    EXPECT_NEAR(value(sums.loss), value(reference), 1e-4) << "epsilon " << epsilon;
    EXPECT_NEAR(value(sums.nll), value(reference_nll), 1e-4) << "epsilon " << epsilon;
    EXPECT_EQ(sums.tokens.item<int64_t>(), expected_tokens);
    EXPECT_TRUE(at::allclose(logits.grad(), reference_logits.grad(), /*rtol=*/1e-5, /*atol=*/1e-6)) << "epsilon " << epsilon;
    EXPECT_FALSE(sums.nll.requires_grad());
  }
}

TEST(LabelSmoothedCrossEntropy, IgnoresPaddedPositions) {
  at::manual_seed(2);
  const int64_t B = 2, T = 6, V = 9;
  const auto targets = random_targets(B, T, V);
  const auto pad = targets.eq(kPadId).unsqueeze(-1);  // [B, T, 1]
  ASSERT_GT(pad.sum().item<int64_t>(), 0);
  const auto logits = at::randn({B, T, V}).requires_grad_();
  // Different logits at padded positions only.
  const auto other_logits = at::where(pad, 1e4 * at::randn({B, T, V}), logits.detach());

  const LabelSmoothingOptions options{0.1};
  const auto sums = label_smoothed_cross_entropy(logits, targets, options);
  const auto other = label_smoothed_cross_entropy(other_logits, targets, options);
  EXPECT_FLOAT_EQ(value(sums.loss), value(other.loss));
  EXPECT_FLOAT_EQ(value(sums.nll), value(other.nll));

  sums.loss.backward();
  const auto padded_grads = logits.grad().masked_select(pad.expand({B, T, V}));
  EXPECT_EQ(padded_grads.abs().max().item<float>(), 0.0f);
  EXPECT_GT(logits.grad().abs().sum().item<float>(), 0.0f);
}

TEST(LabelSmoothedCrossEntropy, ComputesInFp32FromBf16Logits) {
  at::manual_seed(3);
  const int64_t B = 4, T = 5, V = 64;
  const auto targets = random_targets(B, T, V);
  const auto logits = (4.0 * at::randn({B, T, V})).to(at::kBFloat16);

  const LabelSmoothingOptions options{0.1};
  const auto sums = label_smoothed_cross_entropy(logits, targets, options);
  EXPECT_EQ(sums.loss.scalar_type(), at::kFloat);
  EXPECT_EQ(sums.nll.scalar_type(), at::kFloat);
  // The same bf16 values widened first: the arithmetic must be the same fp32 arithmetic.
  const auto widened = label_smoothed_cross_entropy(logits.to(at::kFloat), targets, options);
  EXPECT_NEAR(value(sums.loss), value(widened.loss), 1e-5 * value(widened.loss));
  EXPECT_NEAR(value(sums.nll), value(widened.nll), 1e-5 * value(widened.nll));
}

// LibTorch's own ops on the logits widened to `dtype`: the loss, -log p_y and d loss / d logits.
std::tuple<double, double, at::Tensor> reference_loss(const at::Tensor& logits, const at::Tensor& targets,
                                                      double epsilon, at::ScalarType dtype) {
  const int64_t V = logits.size(-1);
  const auto widened = logits.detach().to(dtype).requires_grad_();
  const auto flat = widened.view({-1, V});
  const auto loss = at::cross_entropy_loss(flat, targets.view({-1}), {}, at::Reduction::Sum, kPadId, epsilon);
  loss.backward();
  const auto nll = at::cross_entropy_loss(flat.detach(), targets.view({-1}), {}, at::Reduction::Sum, kPadId);
  return {value(loss), value(nll), widened.grad()};
}

TEST(LabelSmoothedCrossEntropy, Bf16LogitsGetTheFp32GradientRoundedToBf16) {
  at::manual_seed(4);
  // V 2000 is the bench's vocabulary; 37 leaves a tail after the 16-lane loops.
  for (const int64_t V : {37, 2000}) {
    const int64_t B = 3, T = 5;
    const auto targets = random_targets(B, T, V);
    const auto logits = (4.0 * at::randn({B, T, V})).to(at::kBFloat16).requires_grad_();
    const auto sums = label_smoothed_cross_entropy(logits, targets, LabelSmoothingOptions{0.1});
    sums.loss.backward();
    const auto [loss, nll, grad] = reference_loss(logits, targets, 0.1, at::kFloat);
    EXPECT_NEAR(value(sums.loss), loss, 1e-5 * loss);
    EXPECT_NEAR(value(sums.nll), nll, 1e-5 * nll);
    ASSERT_EQ(logits.grad().scalar_type(), at::kBFloat16);
    // Rounded once from the fp32 gradient: at most one bf16 step (2^-8 relative) from it.
    const auto error = (logits.grad().to(at::kFloat) - grad).abs();
    EXPECT_TRUE(error.le(grad.abs() * (1.0 / 256) + 1e-7).all().item<bool>()) << "V " << V << ", worst " << error.max();
  }
}

TEST(LabelSmoothedCrossEntropy, Fp64LogitsMatchLibTorchInFp64) {
  at::manual_seed(5);
  const int64_t B = 2, T = 4, V = 23;
  const auto targets = random_targets(B, T, V);
  const auto logits = (3.0 * at::randn({B, T, V}, at::kDouble)).requires_grad_();
  const auto sums = label_smoothed_cross_entropy(logits, targets, LabelSmoothingOptions{0.2});
  (2.5 * sums.loss).backward();  // an upstream gradient other than 1
  const auto [loss, nll, grad] = reference_loss(logits, targets, 0.2, at::kDouble);
  EXPECT_NEAR(value(sums.loss), loss, 1e-6 * loss);  // the sums are returned in fp32
  EXPECT_NEAR(value(sums.nll), nll, 1e-6 * nll);
  EXPECT_TRUE(at::allclose(logits.grad(), 2.5 * grad, /*rtol=*/1e-12, /*atol=*/1e-14));
}

TEST(LabelSmoothedCrossEntropy, RejectsTargetsOutsideTheVocabulary) {
  const auto logits = at::zeros({1, 2, 5});
  EXPECT_THROW(label_smoothed_cross_entropy(logits, torch::tensor({{1, 5}}, at::kLong), {}), Error);
  EXPECT_THROW(label_smoothed_cross_entropy(logits, torch::tensor({{-1, 2}}, at::kLong), {}), Error);
}

TEST(LabelSmoothedCrossEntropy, RejectsMismatchedShapesAndBadSmoothing) {
  const auto logits = at::zeros({2, 3, 5});
  EXPECT_THROW(label_smoothed_cross_entropy(logits, at::zeros({2, 4}, at::kLong), {}), Error);
  EXPECT_THROW(label_smoothed_cross_entropy(logits.view({6, 5}), at::zeros({6}, at::kLong), {}), Error);
  EXPECT_THROW(label_smoothed_cross_entropy(logits, at::zeros({2, 3}, at::kInt), {}), Error);
  EXPECT_THROW(label_smoothed_cross_entropy(logits, at::zeros({2, 3}, at::kLong), LabelSmoothingOptions{1.5}), Error);
}

}  // namespace
}  // namespace mixseq
