#include "mixseq/optim/gradient_clipping.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

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

}  // namespace
}  // namespace mixseq
