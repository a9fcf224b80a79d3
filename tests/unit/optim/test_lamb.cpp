#include "mixseq/optim/lamb.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/serialize.h>

#include "mixseq/util/error.h"
#include "test_support.h"

namespace mixseq {
namespace {

at::Tensor parameter(std::initializer_list<double> values) {
  return at::tensor(std::vector<double>(values), at::kDouble).requires_grad_();
}

void set_gradient(at::Tensor& p, std::initializer_list<double> values) {
  p.mutable_grad() = at::tensor(std::vector<double>(values), at::kDouble);
}

void expect_values(const at::Tensor& actual, std::initializer_list<double> expected) {
  EXPECT_TRUE(actual.allclose(at::tensor(std::vector<double>(expected), at::kDouble), /*rtol=*/0, /*atol=*/1e-9))
      << actual;
}

TEST(Lamb, OneStepOnTwoParametersMatchesHandComputation) {
  // lr 0.1, betas (0.9, 0.999), eps 0 so that the arithmetic is exact.
  // w = (3, 4), g = (1, -2): m = (0.1, -0.2), v = (0.001, 0.004), sqrt(v) = sqrt(0.001)·(1, 2),
  //   u = m / sqrt(v) = (√10, -√10), ||u|| = √20, ||w|| = 5, r = 5 / √20,
  //   lr·r·|u_i| = 0.1 · (5 / √20) · √10 = 0.1 · √12.5 = 0.35355339 -> w = (2.64644661, 4.35355339).
  // b = (0), g = (0.5): u = 0.05 / sqrt(0.00025) = √10; ||b|| = 0 so r = 1 -> b = -0.1·√10 = -0.31622777.
  auto w = parameter({3.0, 4.0});
  auto b = parameter({0.0});
  set_gradient(w, {1.0, -2.0});
  set_gradient(b, {0.5});
  Lamb lamb({w, b}, LambOptions(0.1).eps(0.0));
  lamb.step();
  expect_values(w, {3.0 - 0.1 * std::sqrt(12.5), 4.0 + 0.1 * std::sqrt(12.5)});
  expect_values(b, {-0.1 * std::sqrt(10.0)});
}

TEST(Lamb, ClampsTheWeightNormAtTenAndAddsWeightDecayToTheStep) {
  // w = (30, 40), ||w|| = 50 -> 10; g = (1, -2) as above, weight decay 0.01:
  //   u = (√10 + 0.3, -√10 + 0.4) = (3.46227766, -2.76227766), ||u|| = 4.42916973,
  //   r = 10 / 4.42916973 = 2.25775949, w = w - 0.1·r·u = (29.21830097, 40.62365586).
  auto w = parameter({30.0, 40.0});
  set_gradient(w, {1.0, -2.0});
  Lamb lamb({w}, LambOptions(0.1).eps(0.0).weight_decay(0.01));
  lamb.step();
  expect_values(w, {29.2183009743, 40.6236558612});
}

// Two steps with eps 1e-6 and weight decay; the values are what NVIDIA's lamb.py computes.
struct TwoStepCase {
  at::Tensor w = at::tensor({0.5f, -1.0f, 2.0f, 0.25f, 0.0f, -0.75f}).view({2, 3}).requires_grad_();
  at::Tensor b = at::tensor({0.1f, -0.2f, 0.3f}).requires_grad_();
  const LambOptions options = LambOptions(0.01).weight_decay(0.01);

  void first_gradients() {
    w.mutable_grad() = at::tensor({0.1f, 0.2f, -0.3f, 0.4f, -0.5f, 0.6f}).view({2, 3});
    b.mutable_grad() = at::tensor({1.0f, -1.0f, 0.5f});
  }
  void second_gradients() {
    w.mutable_grad() = at::tensor({-0.2f, 0.1f, 0.05f, 0.3f, 0.3f, -0.1f}).view({2, 3});
    b.mutable_grad() = at::tensor({0.2f, 0.4f, -0.6f});
  }
};

TEST(Lamb, TwoStepsMatchTheReferenceImplementation) {
  TwoStepCase c;
  Lamb lamb({c.w, c.b}, c.options);
  c.first_gradients();
  lamb.step();
  c.second_gradients();
  lamb.step();
  EXPECT_TRUE(c.w.allclose(at::tensor({0.4956165254f, -1.0239969492f, 2.0179538727f, 0.2251519561f, 0.0128191048f,
                                       -0.7680386901f}).view({2, 3}),
                           /*rtol=*/1e-5, /*atol=*/1e-6))
      << c.w;
  EXPECT_TRUE(c.b.allclose(at::tensor({0.0944800451f, -0.1963919997f, 0.2984341979f}), /*rtol=*/1e-5, /*atol=*/1e-6))
      << c.b;
}

TEST(Lamb, SaveAndLoadRoundTripMoments) {
  test::TempDir dir;
  TwoStepCase original;
  Lamb saved_lamb({original.w, original.b}, original.options);
  original.first_gradients();
  saved_lamb.step();
  torch::save(saved_lamb, dir.path("lamb.pt"));

  // A fresh optimizer built from the same options over parameters with the same values, as
  // after loading a checkpoint.
  TwoStepCase resumed;
  resumed.w.detach().copy_(original.w.detach());
  resumed.b.detach().copy_(original.b.detach());
  Lamb loaded_lamb({resumed.w, resumed.b}, resumed.options);
  EXPECT_EQ(loaded_lamb.state().size(), 0u);
  torch::load(loaded_lamb, dir.path("lamb.pt"));
  ASSERT_EQ(loaded_lamb.state().size(), 2u);

  // The second step only agrees if m and v came back and are found for the new parameters.
  original.second_gradients();
  resumed.second_gradients();
  saved_lamb.step();
  loaded_lamb.step();
  EXPECT_TRUE(resumed.w.equal(original.w));
  EXPECT_TRUE(resumed.b.equal(original.b));
}

TEST(Lamb, RejectsBadOptions) {
  const auto p = at::zeros({2}).requires_grad_();
  EXPECT_THROW(Lamb({p}, LambOptions(-1.0)), Error);
  EXPECT_THROW(Lamb({p}, LambOptions(0.1).betas({0.9, 1.0})), Error);
}

}  // namespace
}  // namespace mixseq
