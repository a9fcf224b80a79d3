#include "mixseq/nn/clipped_relu.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>

#include "mixseq/util/error.h"

namespace mixseq {
namespace {

struct ReluPass {
  at::Tensor y, grad;
};

template <typename Activation>
ReluPass run_activation(const Activation& activation, const at::Tensor& x, const at::Tensor& g) {
  auto input = x.detach().clone().requires_grad_();
  auto y = activation(input);
  y.backward(g);
  return {y, input.grad()};
}

// Hardtanh's gradient written out: g where 0 < x < 20.
at::Tensor hardtanh_gradient(const at::Tensor& x, const at::Tensor& g) {
  return at::where(at::logical_and(x > 0, x < 20), g, at::zeros_like(g));
}

TEST(ClippedRelu, ValuesAndGradientAreHardtanhsInFp32AndBf16) {
  torch::manual_seed(3);
  // Beyond both clip points, exactly at them, and 100,005 values: several blocks on two threads.
  auto x = at::cat({torch::randn({100002}) * 15, torch::tensor({0.0f, 20.0f, -0.0f})}).view({5, -1});
  const auto g = torch::randn(x.sizes());
  for (const auto dtype : {at::kFloat, at::kBFloat16}) {
    const auto xd = x.to(dtype), gd = g.to(dtype);
    const auto ours = run_activation([](const at::Tensor& t) { return clipped_relu(t, 20.0); }, xd, gd);
    EXPECT_TRUE(at::equal(ours.y, at::clamp(xd, 0.0, 20.0))) << dtype;
    ASSERT_EQ(ours.grad.scalar_type(), dtype);
    EXPECT_TRUE(at::equal(ours.grad, hardtanh_gradient(xd, gd))) << dtype;
    if (dtype == at::kFloat) {  // LibTorch's own Hardtanh (no bf16 backward in 1.13)
      const auto theirs = run_activation([](const at::Tensor& t) { return torch::hardtanh(t, 0.0, 20.0); }, xd, gd);
      EXPECT_TRUE(at::equal(ours.grad, theirs.grad));
    }
  }
}

TEST(ClippedRelu, NonContiguousInputsOtherDtypesAndOneThread) {
  torch::manual_seed(4);
  const auto x = (torch::randn({40, 30}) * 15).t();  // a transposed view
  const auto g = torch::randn({40, 30}).t();
  const auto ours = run_activation([](const at::Tensor& t) { return clipped_relu(t, 20.0); }, x, g);
  EXPECT_TRUE(at::equal(ours.grad, hardtanh_gradient(x, g)));
  const auto xd = x.to(at::kDouble), gd = g.to(at::kDouble);  // the ATen composition
  EXPECT_TRUE(at::equal(run_activation([](const at::Tensor& t) { return clipped_relu(t, 20.0); }, xd, gd).grad,
                        hardtanh_gradient(xd, gd)));
  const int before = at::get_num_threads();
  at::set_num_threads(1);
  const auto one = run_activation([](const at::Tensor& t) { return clipped_relu(t, 20.0); }, x, g);
  at::set_num_threads(before);
  EXPECT_TRUE(at::equal(one.grad, ours.grad));
}

TEST(ClippedRelu, ACeilingBetweenTwoBf16ValuesInBf16) {
  // 1.01 lies between the bf16 values 1.0078125 and 1.015625: the first is below it, inside.
  const auto x = torch::tensor({1.0f, 1.0078125f, 1.015625f, 3.0f, -0.0f, 0.0f}).to(at::kBFloat16);
  const auto g = torch::full({6}, 2.0f).to(at::kBFloat16);
  const auto ours = run_activation([](const at::Tensor& t) { return clipped_relu(t, 1.01); }, x, g);
  EXPECT_EQ(ours.grad.to(at::kFloat).sum().item<float>(), 4.0f) << ours.grad;  // 1.0 and 1.0078125
  EXPECT_TRUE(at::equal(ours.grad, at::where(at::logical_and(x > 0, x.to(at::kFloat) < 1.01f), g, at::zeros_like(g))));
}

TEST(ClippedRelu, NaNGetsNoGradientAndABadCeilingIsAnError) {
  auto x = torch::tensor({std::numeric_limits<float>::quiet_NaN(), 5.0f});
  const auto ours = run_activation([](const at::Tensor& t) { return clipped_relu(t, 20.0); }, x, torch::ones({2}));
  EXPECT_EQ(ours.grad[0].item<float>(), 0.0f);
  EXPECT_EQ(ours.grad[1].item<float>(), 1.0f);
  EXPECT_THROW(clipped_relu(x, 0.0), Error);
  EXPECT_TRUE(at::equal(clipped_relu(torch::tensor({-1.0f, 30.0f}), 20.0), torch::tensor({0.0f, 20.0f})));
}

}  // namespace
}  // namespace mixseq
