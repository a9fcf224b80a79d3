#include "mixseq/nn/bf16_row_block_linear.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <tuple>

#include "mixseq/util/mixed_precision.h"

namespace mixseq {
namespace {

class ThreadCount {
 public:
  explicit ThreadCount(int threads) : before_(at::get_num_threads()) { at::set_num_threads(threads); }
  ~ThreadCount() { at::set_num_threads(before_); }

 private:
  int before_;
};

struct Pass {
  at::Tensor y, grad_x, grad_weight, grad_bias;
};

// y = linear(x) under bf16 autocast, then the gradients of sum(y * r) for a fixed r.
template <typename Linear>
Pass run(const Linear& linear, const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  auto input = x.detach().clone().requires_grad_();
  auto w = weight.detach().clone().requires_grad_();
  auto b = bias.defined() ? bias.detach().clone().requires_grad_() : bias;
  at::Tensor y;
  {
    AutocastScope autocast(Precision::kBf16, torch::Device(torch::kCPU));
    y = linear(input, w, b);
  }
  at::manual_seed(5);
  (y.to(at::kFloat) * at::randn(y.sizes())).sum().backward();
  return {y, input.grad(), w.grad(), b.defined() ? b.grad() : b};
}

void expect_same(const Pass& blocks, const Pass& reference) {
  EXPECT_EQ(blocks.y.scalar_type(), at::kBFloat16);
  EXPECT_EQ(blocks.y.sizes(), reference.y.sizes());
  EXPECT_TRUE(at::equal(blocks.y, reference.y)) << (blocks.y - reference.y).abs().max();
  EXPECT_EQ(blocks.grad_x.scalar_type(), reference.grad_x.scalar_type());
  EXPECT_TRUE(at::equal(blocks.grad_x, reference.grad_x)) << (blocks.grad_x - reference.grad_x).abs().max();
  EXPECT_EQ(blocks.grad_weight.scalar_type(), at::kFloat);
  EXPECT_TRUE(at::equal(blocks.grad_weight, reference.grad_weight))
      << (blocks.grad_weight - reference.grad_weight).abs().max();
  EXPECT_EQ(blocks.grad_bias.defined(), reference.grad_bias.defined());
  if (reference.grad_bias.defined()) {
    EXPECT_TRUE(at::equal(blocks.grad_bias, reference.grad_bias))
        << (blocks.grad_bias - reference.grad_bias).abs().max();
  }
}

TEST(Bf16RowBlockLinear, IsAutocastLinearBitForBit) {
  ThreadCount two(2);
  // 300 rows: a block of 256 and one of 44; 992: 960 and 32 (the bench's batch); 258: 256 and 2.
  for (const auto& [rows, in, out] : {std::tuple{300, 64, 48}, std::tuple{992, 256, 128}, std::tuple{258, 64, 96}}) {
    for (const bool with_bias : {true, false}) {
      at::manual_seed(rows + with_bias);
      const auto x = at::randn({2, rows / 2, in});
      const auto weight = at::randn({out, in}) / 8;
      const auto bias = with_bias ? at::randn({out}) : at::Tensor();
      SCOPED_TRACE(testing::Message() << rows << " rows, bias " << with_bias);
      expect_same(run(bf16_row_block_linear, x, weight, bias),
                  run([](auto&... a) { return at::linear(a...); }, x, weight, bias));
    }
  }
}

TEST(Bf16RowBlockLinear, KeepsABf16InputsGradientInBf16) {
  ThreadCount two(2);
  at::manual_seed(1);
  const auto x = at::randn({300, 32}).to(at::kBFloat16);
  const auto weight = at::randn({24, 32});
  const auto bias = at::randn({24});
  expect_same(run(bf16_row_block_linear, x, weight, bias),
              run([](auto&... a) { return at::linear(a...); }, x, weight, bias));
}

TEST(Bf16RowBlockLinear, LeavesInputsWithoutGradientsAlone) {
  ThreadCount two(2);
  const auto x = at::randn({300, 16});
  auto weight = at::randn({8, 16}).requires_grad_();
  at::Tensor y;
  {
    AutocastScope autocast(Precision::kBf16, torch::Device(torch::kCPU));
    y = bf16_row_block_linear(x, weight, at::Tensor());
  }
  y.to(at::kFloat).sum().backward();
  ASSERT_TRUE(weight.grad().defined());
  EXPECT_TRUE(at::allclose(weight.grad(), x.to(at::kBFloat16).to(at::kFloat).sum(0).expand({8, 16}), 1e-2, 1e-1));
}

TEST(Bf16RowBlockLinear, TakenForBf16ProductsOfAwkwardRowCountsOnTwoThreads) {
  const auto x = at::randn({300, 8});
  {
    ThreadCount two(2);
    EXPECT_FALSE(takes_bf16_row_blocks(x));  // fp32
    EXPECT_TRUE(takes_bf16_row_blocks(x.to(at::kBFloat16)));
    AutocastScope autocast(Precision::kBf16, torch::Device(torch::kCPU));
    EXPECT_TRUE(takes_bf16_row_blocks(x));
    EXPECT_TRUE(takes_bf16_row_blocks(x.view({3, 100, 8})));
    EXPECT_FALSE(takes_bf16_row_blocks(at::randn({256, 8})));  // a multiple of 64
    EXPECT_FALSE(takes_bf16_row_blocks(at::randn({255, 8})));  // too few rows to matter
  }
  ThreadCount one(1);
  AutocastScope autocast(Precision::kBf16, torch::Device(torch::kCPU));
  EXPECT_FALSE(takes_bf16_row_blocks(x));
}

}  // namespace
}  // namespace mixseq
