#include "mixseq/nn/cpu_bf16_linear.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <tuple>

#include "mixseq/util/mixed_precision.h"
#include "thread_count.h"

namespace mixseq {
namespace {

using test::ThreadCount;

struct Bf16Pass {
  at::Tensor y, grad_x, grad_weight, grad_bias;
};

// y = linear(x) under bf16 autocast, then the gradients for an upstream bf16 gradient g.
template <typename Linear>
Bf16Pass run(const Linear& linear, const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
         const at::Tensor& g) {
  auto input = x.detach().clone().requires_grad_();
  auto w = weight.detach().clone().requires_grad_();
  auto b = bias.defined() ? bias.detach().clone().requires_grad_() : bias;
  at::Tensor y;
  {
    AutocastScope autocast(Precision::kBf16, torch::Device(torch::kCPU));
    y = linear(input, w, b);
  }
  y.backward(g);
  return {y, input.grad(), w.grad(), b.defined() ? b.grad() : b};
}

Bf16Pass autocast_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, const at::Tensor& g) {
  return run([](auto&... a) { return at::linear(a...); }, x, weight, bias, g);
}

// The bf16 operands' products summed exactly (in fp64).
at::Tensor exact_product(const at::Tensor& a, const at::Tensor& b) {
  return at::mm(a.to(at::kBFloat16).to(at::kDouble), b.to(at::kBFloat16).to(at::kDouble));
}

void expect_close_to_exact(const at::Tensor& actual, const at::Tensor& exact) {
  EXPECT_EQ(actual.scalar_type(), at::kFloat);
  const double error = (actual.to(at::kDouble) - exact).abs().max().item<double>();
  EXPECT_LT(error, 1e-5 * exact.abs().max().item<double>()) << "bf16 rounding would be ~4e-3 relative";
}

TEST(CpuBf16Linear, OutputIsAutocastsAndFp32GradientsAreUnroundedProducts) {
  // 300 rows: blocks of 256 and 44 on two threads; 992: 960 and 32 (the bench's batch); 258: 256
  // and 2; 320: one block; each on one thread too, one block.
  for (const int threads : {2, 1}) {
    ThreadCount count(threads);
    for (const auto& [rows, in, out] : {std::tuple{300, 64, 48}, std::tuple{992, 256, 128}, std::tuple{258, 64, 96},
                                        std::tuple{320, 32, 64}}) {
      for (const bool with_bias : {true, false}) {
        SCOPED_TRACE(testing::Message() << threads << " threads, " << rows << " rows, bias " << with_bias);
        at::manual_seed(rows + with_bias);
        const auto x = at::randn({2, rows / 2, in});
        const auto weight = at::randn({out, in}) / 8;
        const auto bias = with_bias ? at::randn({out}) : at::Tensor();
        const auto g = at::randn({2, rows / 2, out}).to(at::kBFloat16);
        const auto ours = run(cpu_bf16_linear, x, weight, bias, g);
        const auto reference = autocast_linear(x, weight, bias, g);
        EXPECT_EQ(ours.y.scalar_type(), at::kBFloat16);
        EXPECT_TRUE(at::equal(ours.y, reference.y)) << (ours.y - reference.y).abs().max();
        const auto g2 = g.view({rows, out});
        expect_close_to_exact(ours.grad_x.view({rows, in}), exact_product(g2, weight));
        expect_close_to_exact(ours.grad_weight, exact_product(g2.t(), x.view({rows, in})));
        if (with_bias) {
          EXPECT_TRUE(at::equal(ours.grad_bias, reference.grad_bias))
              << (ours.grad_bias - reference.grad_bias).abs().max();
        }
      }
    }
  }
}

TEST(CpuBf16Linear, ABf16InputsGradientIsAutocastsInBf16) {
  ThreadCount two(2);
  at::manual_seed(1);
  const auto x = at::randn({300, 32}).to(at::kBFloat16);
  const auto weight = at::randn({24, 32});
  const auto bias = at::randn({24});
  const auto g = at::randn({300, 24}).to(at::kBFloat16);
  const auto ours = run(cpu_bf16_linear, x, weight, bias, g);
  const auto reference = autocast_linear(x, weight, bias, g);
  EXPECT_EQ(ours.grad_x.scalar_type(), at::kBFloat16);
  EXPECT_TRUE(at::equal(ours.grad_x, reference.grad_x)) << (ours.grad_x - reference.grad_x).abs().max();
  EXPECT_TRUE(at::equal(ours.y, reference.y));
}

TEST(CpuBf16Linear, LeavesInputsWithoutGradientsAlone) {
  ThreadCount two(2);
  const auto x = at::randn({300, 16});
  auto weight = at::randn({8, 16}).requires_grad_();
  at::Tensor y;
  {
    AutocastScope autocast(Precision::kBf16, torch::Device(torch::kCPU));
    y = cpu_bf16_linear(x, weight, at::Tensor());
  }
  y.backward(at::ones_like(y));
  ASSERT_TRUE(weight.grad().defined());
  expect_close_to_exact(weight.grad(), exact_product(at::ones({8, 300}), x));
}

TEST(CpuBf16Linear, TakenForBf16ProductsOnTheCpuWithGradientsOrSplitRows) {
  ThreadCount two(2);
  const auto x = at::randn({3, 8});
  EXPECT_FALSE(takes_cpu_bf16_linear(x));  // fp32
  EXPECT_TRUE(takes_cpu_bf16_linear(x.to(at::kBFloat16)));
  AutocastScope autocast(Precision::kBf16, torch::Device(torch::kCPU));
  EXPECT_TRUE(takes_cpu_bf16_linear(x));
  EXPECT_TRUE(takes_cpu_bf16_linear(x.view({3, 1, 8})));
  at::NoGradGuard no_gradients;
  EXPECT_FALSE(takes_cpu_bf16_linear(x));
  EXPECT_FALSE(takes_cpu_bf16_linear(at::randn({320, 8})));  // a multiple of 64
  EXPECT_TRUE(takes_cpu_bf16_linear(at::randn({30, 11, 8})));  // 330 rows
  ThreadCount one(1);
  EXPECT_FALSE(takes_cpu_bf16_linear(at::randn({30, 11, 8})));
}

}  // namespace
}  // namespace mixseq
