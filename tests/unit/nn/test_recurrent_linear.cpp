// RecurrentLinear against at::linear step by step (outputs and every gradient, through a
// recurrence whose step t reads step t - 1), against finite differences, steps the loss does not
// reach, a second backward, no recording, and bf16 autocast.
#include "mixseq/nn/recurrent_linear.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/torch.h>

#include <functional>
#include <vector>

#include "gradient_check.h"
#include "util/torch_compat.h"

namespace mixseq {
namespace {

using Linear = std::function<torch::Tensor(const torch::Tensor&)>;

// h_t = tanh(linear([x_t, h_{t-1}])) for t < T; returns every h_t stacked [T, B, H].
torch::Tensor recurrence(const Linear& linear, const torch::Tensor& x, const torch::Tensor& h0) {
  std::vector<torch::Tensor> hs;
  auto h = h0;
  for (int64_t t = 0; t < x.size(0); ++t) {
    h = torch::tanh(linear(torch::cat({x[t], h}, -1)));
    hs.push_back(h);
  }
  return torch::stack(hs);
}

struct Case {
  torch::Tensor x, h0, weight, bias, probe;
};

Case make_case(int64_t T, int64_t B, int64_t D, int64_t H, torch::Dtype dtype) {
  const auto o = torch::TensorOptions().dtype(dtype);
  return {torch::randn({T, B, D}, o).requires_grad_(), torch::randn({B, H}, o).requires_grad_(),
          (0.5 * torch::randn({H, D + H}, o)).requires_grad_(), torch::randn({H}, o).requires_grad_(),
          torch::randn({T, B, H}, o)};
}

// LibTorch's linear with the case's weight and bias, step by step: the reference.
Linear plain_linear(const Case& c) {
  return [c](const torch::Tensor& in) { return torch::nn::functional::linear(in, c.weight, c.bias); };
}

std::vector<torch::Tensor> gradients(const torch::Tensor& loss, const Case& c) {
  return torch::autograd::grad({loss}, {c.x, c.h0, c.weight, c.bias});
}

TEST(RecurrentLinear, EqualsStepByStepLinearWithGradients) {
  torch::manual_seed(3);
  for (const auto dtype : {torch::kDouble, torch::kFloat}) {
    const auto c = make_case(/*T=*/6, /*B=*/3, /*D=*/5, /*H=*/7, dtype);
    const RecurrentLinear linear(c.weight, c.bias);
    ASSERT_TRUE(linear.records_gradient());
    const auto ours = recurrence(std::cref(linear), c.x, c.h0);
    const auto theirs = recurrence(plain_linear(c), c.x, c.h0);
    const double tolerance = dtype == torch::kDouble ? 1e-12 : 1e-5;
    EXPECT_TRUE(torch::allclose(ours, theirs, tolerance, tolerance));
    EXPECT_EQ(ours.scalar_type(), dtype);
    const auto g_ours = gradients((ours * c.probe).sum(), c);
    const auto g_theirs = gradients((theirs * c.probe).sum(), c);
    const char* names[] = {"x", "h0", "weight", "bias"};
    for (size_t i = 0; i < g_ours.size(); ++i) {
      EXPECT_EQ(g_ours[i].scalar_type(), dtype) << names[i];
      EXPECT_TRUE(torch::allclose(g_ours[i], g_theirs[i], tolerance, tolerance))
          << names[i] << ": " << (g_ours[i] - g_theirs[i]).abs().max();
    }
  }
}

// What the steps keep for the weight's gradient (each x_t) goes with the graph, whether backward
// ran or not. x_t carries the recurrence's history, which reaches the steps' own nodes: kept with
// that history, it made a reference cycle, and Tacotron 2's training grew by every update's inputs
// until it was killed for memory (22 GB after 400 updates).
TEST(RecurrentLinear, WhatItKeepsGoesWithTheGraph) {
  torch::manual_seed(8);
  for (const bool backward : {false, true}) {
    std::vector<c10::weak_intrusive_ptr<c10::StorageImpl>> inputs;
    {
      const auto c = make_case(/*T=*/5, /*B=*/2, /*D=*/3, /*H=*/4, torch::kFloat);
      const RecurrentLinear linear(c.weight, c.bias);
      const Linear watched = [&](const torch::Tensor& in) {
        inputs.push_back(in.storage().getWeakStorageImpl());
        return linear(in);
      };
      const auto loss = (recurrence(watched, c.x, c.h0) * c.probe).sum();
      if (backward) loss.backward();
    }
    ASSERT_EQ(inputs.size(), 5u);
    for (size_t t = 0; t < inputs.size(); ++t)
      EXPECT_TRUE(inputs[t].expired()) << "step " << t << (backward ? ", after backward" : ", without backward");
  }
}

TEST(RecurrentLinear, MatchesFiniteDifferences) {
  torch::manual_seed(4);
  const auto c = make_case(/*T=*/4, /*B=*/2, /*D=*/3, /*H=*/4, torch::kDouble);
  test::expect_gradients_match_finite_differences(
      [&] {
        const RecurrentLinear linear(c.weight, c.bias);
        return (recurrence(std::cref(linear), c.x, c.h0) * c.probe).sum();
      },
      {{"x", c.x}, {"h0", c.h0}, {"weight", c.weight}, {"bias", c.bias}});
}

// Steps whose outputs the loss does not use add nothing, and the gradient node still runs.
TEST(RecurrentLinear, StepsTheLossDoesNotReachAddNothing) {
  torch::manual_seed(5);
  const auto c = make_case(/*T=*/5, /*B=*/2, /*D=*/3, /*H=*/4, torch::kDouble);
  const RecurrentLinear linear(c.weight, c.bias);
  const auto used = recurrence(std::cref(linear), c.x.slice(0, 0, 3), c.h0);  // steps 0-2
  const auto unused = linear(torch::cat({c.x[3], used[2]}, -1));              // step 3, never in the loss
  (void)unused;
  const auto g_ours = gradients((used * c.probe.slice(0, 0, 3)).sum(), c);
  const auto reference = recurrence(plain_linear(c), c.x.slice(0, 0, 3), c.h0);
  const auto g_theirs = gradients((reference * c.probe.slice(0, 0, 3)).sum(), c);
  for (size_t i = 0; i < g_ours.size(); ++i)  // x's rows 3 and 4: zero on both sides
    EXPECT_TRUE(torch::allclose(g_ours[i], g_theirs[i], 1e-12, 1e-12)) << i;
}

// backward twice over one graph (retain_graph) accumulates the same gradient twice.
TEST(RecurrentLinear, SecondBackwardGivesTheSameGradients) {
  torch::manual_seed(6);
  const auto c = make_case(/*T=*/3, /*B=*/2, /*D=*/3, /*H=*/4, torch::kDouble);
  const RecurrentLinear linear(c.weight, c.bias);
  const auto loss = (recurrence(std::cref(linear), c.x, c.h0) * c.probe).sum();
  loss.backward({}, /*retain_graph=*/true);
  const auto once = c.weight.grad().clone(), bias_once = c.bias.grad().clone();
  loss.backward();
  EXPECT_TRUE(torch::allclose(c.weight.grad(), 2 * once, 1e-12, 1e-12));
  EXPECT_TRUE(torch::allclose(c.bias.grad(), 2 * bias_once, 1e-12, 1e-12));
}

TEST(RecurrentLinear, PlainProductWithoutRecording) {
  torch::manual_seed(7);
  const auto weight = torch::randn({6, 4}, torch::requires_grad()), bias = torch::randn({6});
  const auto x = torch::randn({1, 4});
  {
    torch::NoGradGuard no_grad;
    const RecurrentLinear linear(weight, bias);
    EXPECT_FALSE(linear.records_gradient());
    EXPECT_TRUE(torch::allclose(linear(x), torch::nn::functional::linear(x, weight, bias), 1e-6, 1e-6));
  }
  const RecurrentLinear frozen(weight.detach(), bias);  // nothing of its own to train
  EXPECT_FALSE(frozen.records_gradient());
  const RecurrentLinear no_bias(weight);
  EXPECT_TRUE(no_bias.records_gradient());
  no_bias(x).sum().backward();
  EXPECT_TRUE(torch::allclose(weight.grad(), x.expand({6, 4}), 1e-6, 1e-6));  // d sum(W x) / dW = 1 xᵀ
  EXPECT_THROW(RecurrentLinear(weight, torch::randn({5})), std::exception);
  EXPECT_THROW(no_bias(torch::randn({1, 5})), std::exception);
}

// Under bf16 autocast: the same bf16 outputs as at::linear's under autocast, and gradients in the
// parameters' dtypes at least as close to the fp32 ones as autocast's step-by-step linear gives
// (whose weight gradient is rounded to bf16 at every step; here it is summed in fp32 once).
TEST(RecurrentLinear, Bf16AutocastKeepsTheParametersDtypes) {
  torch::manual_seed(8);
  const auto c = make_case(/*T=*/5, /*B=*/4, /*D=*/16, /*H=*/32, torch::kFloat);
  const auto plain = plain_linear(c);
  const auto reference = recurrence(plain, c.x, c.h0);
  const auto g_reference = gradients((reference * c.probe).sum(), c);
  compat::set_autocast(c10::kCPU, true, at::kBFloat16);
  torch::Tensor ours, autocast;
  {
    const RecurrentLinear linear(c.weight, c.bias);
    ours = recurrence(std::cref(linear), c.x, c.h0);
    autocast = recurrence(plain, c.x, c.h0);
  }
  compat::set_autocast(c10::kCPU, false, at::kBFloat16);
  at::autocast::clear_cache();
  EXPECT_EQ(ours.scalar_type(), autocast.scalar_type());
  EXPECT_EQ(ours.scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::allclose(ours.to(torch::kFloat), autocast.to(torch::kFloat), 1e-2, 1e-2))
      << (ours.to(torch::kFloat) - autocast.to(torch::kFloat)).abs().max();
  const auto g_ours = gradients((ours.to(torch::kFloat) * c.probe).sum(), c);
  const auto g_autocast = gradients((autocast.to(torch::kFloat) * c.probe).sum(), c);
  const char* names[] = {"x", "h0", "weight", "bias"};
  for (size_t i = 0; i < g_ours.size(); ++i) {
    EXPECT_EQ(g_ours[i].scalar_type(), torch::kFloat) << names[i];
    const double scale = g_reference[i].abs().max().item<double>();
    const double ours_error = (g_ours[i] - g_reference[i]).abs().max().item<double>();
    const double autocast_error = (g_autocast[i] - g_reference[i]).abs().max().item<double>();
    EXPECT_LT(ours_error, 1.25 * autocast_error + 1e-3 * scale)
        << names[i] << ": " << ours_error << " against autocast's " << autocast_error;
  }
}

}  // namespace
}  // namespace mixseq
