// hashed_dropout and hashed_relu_dropout: the share of zeros, the scale of the rest, repeatability under
// torch::manual_seed, the gradient (the mask), the identity in evaluation.
#include "mixseq/nn/hashed_dropout.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <limits>

#include "gradient_check.h"
#include "test_support.h"

namespace mixseq {
namespace {

TEST(HashedDropout, ZeroesAShareOfPAndScalesTheRest) {
  at::manual_seed(1);
  const auto x = at::rand({1000, 1000}) + 1.0;  // no zeros of its own
  for (const double p : {0.1, 0.5, 0.9}) {
    const auto y = hashed_dropout(x, p, /*training=*/true);
    const auto dropped = (y == 0).to(at::kDouble).mean().item<double>();
    EXPECT_NEAR(dropped, p, 0.002) << p;  // 1e6 draws: the standard deviation is below 0.0005
    const auto kept = y != 0;
    EXPECT_TRUE(at::allclose(y.masked_select(kept), x.masked_select(kept) / (1.0 - p), 1e-6, 1e-6)) << p;
  }
  // Neighbouring elements are independent: pairs (both dropped) occur p^2 of the time.
  const auto y = hashed_dropout(x, 0.5, true).view(-1);
  const auto both = ((y.slice(0, 0, -1) == 0) & (y.slice(0, 1) == 0)).to(at::kDouble).mean().item<double>();
  EXPECT_NEAR(both, 0.25, 0.003);
}

TEST(HashedDropout, RepeatsUnderTheSameSeedAndDiffersFromCallToCall) {
  const auto x = at::ones({64, 64});
  at::manual_seed(7);
  const auto a = hashed_dropout(x, 0.3, true), b = hashed_dropout(x, 0.3, true);
  at::manual_seed(7);
  EXPECT_TRUE(at::equal(hashed_dropout(x, 0.3, true), a));
  EXPECT_FALSE(at::equal(a, b));
}

TEST(HashedDropout, IsTheIdentityInEvaluationOrWithPZero) {
  const auto x = at::randn({5, 7});
  EXPECT_TRUE(hashed_dropout(x, 0.5, /*training=*/false).is_same(x));
  EXPECT_TRUE(hashed_dropout(x, 0.0, true).is_same(x));
  EXPECT_TRUE(at::equal(hashed_relu_dropout(x, 0.5, false), at::relu(x)));
  EXPECT_EQ(test::error_of([&] { hashed_dropout(x, 1.0, true); }), "dropout probability must be in [0, 1), got 1");
}

TEST(HashedDropout, ReluDropoutIsReluThenTheSameMask) {
  const auto x = at::randn({300, 40});
  at::manual_seed(3);
  const auto fused = hashed_relu_dropout(x, 0.2, true);
  at::manual_seed(3);
  const auto mask = hashed_dropout(at::ones_like(x), 0.2, true);
  EXPECT_TRUE(at::allclose(fused, at::relu(x) * mask, 1e-6, 1e-7));
}

TEST(HashedDropout, GradientsAreTheMask) {
  const auto x = at::randn({6, 5}, at::kDouble).requires_grad_();
  const auto weighting = at::randn({6, 5}, at::kDouble);
  for (const bool relu : {false, true}) {
    const auto loss = [&] {
      at::manual_seed(11);  // the same mask at every evaluation
      return ((relu ? hashed_relu_dropout(x, 0.4, true) : hashed_dropout(x, 0.4, true)) * weighting).sum();
    };
    test::expect_gradients_match_finite_differences(loss, {{"x", x}});
  }
}

TEST(HashedDropout, KeepsTheDtype) {
  const auto x = at::randn({100}).to(at::kBFloat16);
  const auto y = hashed_dropout(x, 0.5, true);
  EXPECT_EQ(y.scalar_type(), at::kBFloat16);
  EXPECT_TRUE(at::allclose(y.masked_select(y != 0).to(at::kFloat), (x.masked_select(y != 0) * 2).to(at::kFloat)));
}

// bf16 runs through fp32 chunks: its output and mask are the fp32 kernel's, rounded, for every
// element (sizes across chunk and thread boundaries, with relu, negative zeros and a NaN).
TEST(HashedDropout, Bf16IsTheFp32KernelRounded) {
  for (const int64_t n : {int64_t{1}, int64_t{511}, int64_t{513}, int64_t{40000}}) {
    for (const bool relu : {false, true}) {
      SCOPED_TRACE(testing::Message() << n << " elements, relu " << relu);
      auto x = at::randn({n}).to(at::kBFloat16);
      x[0] = -0.0;
      if (n > 2) x[n / 2] = std::numeric_limits<float>::quiet_NaN();
      const auto drop = [&](const at::Tensor& input) {
        at::manual_seed(21);
        return hashed_dropout_with_mask(relu ? at::relu(input) : input, 0.3);
      };
      const auto [y16, mask16] = drop(x);
      const auto [y32, mask32] = drop(x.to(at::kFloat));
      EXPECT_TRUE(at::equal(mask16, mask32.to(at::kBFloat16)));
      EXPECT_TRUE(at::equal(y16.isnan(), y32.isnan()));
      EXPECT_TRUE(at::equal(y16.nan_to_num(), y32.to(at::kBFloat16).nan_to_num()));
    }
  }
  const auto x = at::randn({3000}).to(at::kBFloat16);
  at::manual_seed(5);
  const auto fused = hashed_relu_dropout(x, 0.2, true);
  at::manual_seed(5);
  const auto fused32 = hashed_relu_dropout(x.to(at::kFloat), 0.2, true);
  EXPECT_TRUE(at::equal(fused, fused32.to(at::kBFloat16)));
}

// The fused residual add draws as hashed_dropout does under the same seed; a bf16 branch is
// widened and dropped in fp32. Backward: the gradient itself for x, times the mask for the branch.
TEST(ResidualDropout, IsXPlusTheDroppedBranchWithItsGradients) {
  for (const auto dtype : {at::kFloat, at::kBFloat16}) {
    SCOPED_TRACE(testing::Message() << dtype);
    const auto x = at::randn({7, 3001}).requires_grad_();
    const auto branch = at::randn({7, 3001}).to(dtype).requires_grad_();
    at::manual_seed(9);
    const auto y = residual_dropout(x, branch, 0.25, /*training=*/true);
    at::manual_seed(9);
    const auto mask = hashed_dropout_with_mask(at::ones({7, 3001}), 0.25).second;  // fp32 {0, 1 / 0.75}
    EXPECT_EQ(y.scalar_type(), at::kFloat);
    EXPECT_TRUE(at::equal(y, x + branch.to(at::kFloat) * mask));
    if (dtype == at::kFloat) {
      at::manual_seed(9);
      EXPECT_TRUE(at::equal(y, x + hashed_dropout(branch, 0.25, true)));
    }
    const auto g = at::randn({7, 3001});
    y.backward(g);
    EXPECT_TRUE(at::equal(x.grad(), g));
    EXPECT_EQ(branch.grad().scalar_type(), dtype);
    EXPECT_TRUE(at::equal(branch.grad(), (g * mask).to(dtype)));
  }
}

TEST(ResidualDropout, IsThePlainSumInEvaluationAndKeepsGradientsOtherwise) {
  const auto x = at::randn({4, 6}), branch = at::randn({4, 6});
  EXPECT_TRUE(at::equal(residual_dropout(x, branch, 0.5, /*training=*/false), x + branch));
  EXPECT_TRUE(at::equal(residual_dropout(x, branch, 0.0, true), x + branch));
  const auto xd = at::randn({3, 5}, at::kDouble).requires_grad_();  // fp64: the unfused ops
  const auto bd = at::randn({3, 5}, at::kDouble).requires_grad_();
  const auto weighting = at::randn({3, 5}, at::kDouble);
  const auto loss = [&] {
    at::manual_seed(4);
    return (residual_dropout(xd, bd, 0.4, true) * weighting).sum();
  };
  test::expect_gradients_match_finite_differences(loss, {{"x", xd}, {"branch", bd}});
}

}  // namespace
}  // namespace mixseq
