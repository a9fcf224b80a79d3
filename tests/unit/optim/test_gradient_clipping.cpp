#include "mixseq/optim/gradient_clipping.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/types.h>
// clip_grad.h uses torch:: tensor functions without including them: after torch/types.h.
#include <torch/nn/utils/clip_grad.h>

#include <cmath>

#include "mixseq/util/error.h"

namespace mixseq {
namespace {

// Gradients (3, 4) and (12): global L2 norm sqrt(9 + 16 + 144) = 13.
struct Parameters {
  at::Tensor a = at::zeros({2}).requires_grad_();
  at::Tensor b = at::zeros({1}).requires_grad_();
  at::Tensor unused = at::zeros({5}).requires_grad_();  // no gradient

  Parameters() {
    a.mutable_grad() = at::tensor({3.0f, 4.0f});
    b.mutable_grad() = at::tensor({12.0f});
  }
  std::vector<at::Tensor> all() const { return {a, b, unused}; }
};

TEST(GradientClipping, ScalesAllGradientsToMaxNormAndReturnsTheNormBefore) {
  Parameters p;
  EXPECT_NEAR(clip_gradient_norm(p.all(), GradientClippingOptions{6.5}), 13.0, 1e-5);
  // Factor 6.5 / 13 = 0.5 (LibTorch divides by 13 + 1e-6).
  EXPECT_TRUE(p.a.grad().allclose(at::tensor({1.5f, 2.0f}), /*rtol=*/1e-6));
  EXPECT_TRUE(p.b.grad().allclose(at::tensor({6.0f}), /*rtol=*/1e-6));
  EXPECT_NEAR(clip_gradient_norm(p.all(), GradientClippingOptions{0.0}), 6.5, 1e-5);
  EXPECT_FALSE(p.unused.grad().defined());
}

TEST(GradientClipping, LeavesGradientsBelowTheLimitOrWhenDisabled) {
  for (const double max_norm : {20.0, 0.0}) {
    Parameters p;
    EXPECT_NEAR(clip_gradient_norm(p.all(), GradientClippingOptions{max_norm}), 13.0, 1e-5);
    EXPECT_TRUE(p.a.grad().equal(at::tensor({3.0f, 4.0f})));
    EXPECT_TRUE(p.b.grad().equal(at::tensor({12.0f})));
  }
  EXPECT_EQ(clip_gradient_norm({at::zeros({3}).requires_grad_()}, {}), 0.0);
  EXPECT_THROW(clip_gradient_norm({}, GradientClippingOptions{-1.0}), Error);
}

// The CPU passes against LibTorch's clip_grad_norm_ on gradients of many sizes (lane and block
// remainders), clipping or not, and with a NaN (the norm NaN, every gradient NaN, as LibTorch).
TEST(GradientClipping, MatchesLibTorchsClipGradNorm) {
  at::manual_seed(2);
  const std::vector<std::vector<int64_t>> shapes = {{7}, {16}, {4097}, {300, 257}, {1}, {2000, 256}};
  for (const double max_norm : {1.0, 1e6}) {
    for (const bool with_nan : {false, true}) {
      SCOPED_TRACE(testing::Message() << "max_norm " << max_norm << ", NaN " << with_nan);
      std::vector<at::Tensor> ours, theirs;
      double exact_square = 0;
      for (const auto& shape : shapes) {
        const auto grad = at::randn(shape) * 0.01;
        exact_square += grad.to(at::kDouble).square().sum().item<double>();
        ours.push_back(at::zeros(shape).requires_grad_());
        theirs.push_back(at::zeros(shape).requires_grad_());
        ours.back().mutable_grad() = grad.clone();
        theirs.back().mutable_grad() = grad.clone();
      }
      if (with_nan) ours[2].mutable_grad()[5] = NAN, theirs[2].mutable_grad()[5] = NAN;
      const double norm = clip_gradient_norm(ours, GradientClippingOptions{max_norm});
      const double expected = torch::nn::utils::clip_grad_norm_(theirs, max_norm);
      if (with_nan) {
        EXPECT_TRUE(std::isnan(norm));
      } else {
        EXPECT_NEAR(norm, std::sqrt(exact_square), 1e-7 * norm);  // fp64 sums of fp32 blocks
        EXPECT_NEAR(norm, expected, 1e-5 * expected);              // LibTorch sums in fp32
      }
      for (size_t k = 0; k < ours.size(); ++k)
        EXPECT_TRUE(at::allclose(ours[k].grad(), theirs[k].grad(), 1e-5, 1e-9, /*equal_nan=*/true)) << k;
    }
  }
}

}  // namespace
}  // namespace mixseq
