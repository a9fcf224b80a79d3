#include "mixseq/nn/conv1d_products.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <tuple>
#include <vector>

#include "convolution_pass.h"
#include "gradient_check.h"
#include "mixseq/util/error.h"
#include "mixseq/util/mixed_precision.h"

namespace mixseq {
namespace {

using test::run_convolution_pass;

double error_to_exact(const at::Tensor& mine, const at::Tensor& exact) {
  return ((mine.to(at::kDouble) - exact).abs().max() / exact.abs().max()).item<double>();
}

// (taps, dilation, padding, frames): "same" padding, none, all the span allows, one between, a
// dilation, an input shorter than the span.
const std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>> kShapes = {
    {5, 1, 2, 13}, {5, 1, 0, 13}, {5, 1, 4, 13}, {7, 1, 1, 11}, {4, 2, 3, 10}, {9, 1, 5, 6}, {1, 1, 0, 7}};

TEST(Conv1dProducts, EqualsConv1dAndItsGradientsInDouble) {
  torch::manual_seed(3);
  for (const auto& [taps, dilation, padding, frames] : kShapes) {
    for (const bool with_bias : {false, true}) {
      const auto x = torch::randn({3, 4, frames}, at::kDouble);
      const auto w = torch::randn({5, 4, taps}, at::kDouble);
      const auto b = with_bias ? torch::randn({5}, at::kDouble) : at::Tensor();
      const int64_t frames_out = frames + 2 * padding - (taps - 1) * dilation;
      const auto g = torch::randn({3, 5, frames_out}, at::kDouble);
      const auto mine = run_convolution_pass(
          [&](auto& x, auto& w, auto& b) { return conv1d_products(x, w, b, padding, dilation); }, x, w, b, g, false);
      const auto theirs = run_convolution_pass(
          [&](auto& x, auto& w, auto& b) { return at::conv1d(x, w, b, 1, padding, dilation); }, x, w, b, g, false);
      SCOPED_TRACE(testing::Message() << taps << " taps, dilation " << dilation << ", padding " << padding << ", "
                                      << frames << " frames, bias " << with_bias);
      ASSERT_EQ(mine.y.sizes(), theirs.y.sizes());
      EXPECT_TRUE(at::allclose(mine.y, theirs.y, 1e-12, 1e-12));
      EXPECT_TRUE(at::allclose(mine.grad_x, theirs.grad_x, 1e-12, 1e-12));
      EXPECT_TRUE(at::allclose(mine.grad_weight, theirs.grad_weight, 1e-12, 1e-12));
      if (with_bias) {
        EXPECT_TRUE(at::allclose(mine.grad_bias, theirs.grad_bias, 1e-12, 1e-12));
      }
    }
  }
}

TEST(Conv1dProducts, GradientsMatchFiniteDifferences) {
  torch::manual_seed(5);
  auto x = torch::randn({2, 3, 9}, at::kDouble).requires_grad_();
  auto w = torch::randn({4, 3, 3}, at::kDouble).requires_grad_();
  auto b = torch::randn({4}, at::kDouble).requires_grad_();
  const auto mix = torch::randn({2, 4, 7}, at::kDouble);  // padding 1, dilation 2: 9 + 2 - 4 = 7 frames
  test::expect_gradients_match_finite_differences(
      [&] { return (conv1d_products(x, w, b, 1, 2) * mix).sum(); }, {{"x", x}, {"weight", w}, {"bias", b}});
}

// Under CPU bf16 autocast the operands are rounded to bf16 and summed in fp32: against the double
// convolution of the rounded operands, the output (bf16) is within its rounding, the weight's
// gradient (fp32) and an fp32 input's far closer.
TEST(Conv1dProducts, Bf16AutocastSumsRoundedOperandsInFp32) {
  torch::manual_seed(7);
  const int64_t taps = 21, padding = 10;
  const auto w = torch::randn({16, 12, taps}) * 0.1;
  const auto g = torch::randn({2, 16, 30});
  const auto rounded = [](const at::Tensor& t) { return t.to(at::kBFloat16).to(at::kDouble); };
  for (const auto input_dtype : {at::kFloat, at::kBFloat16}) {
    SCOPED_TRACE(testing::Message() << "input " << input_dtype);
    const auto x = torch::randn({2, 12, 30}).to(input_dtype);
    const auto mine = run_convolution_pass(
        [&](auto& x, auto& w, auto& b) { return conv1d_products(x, w, b, padding, 1); }, x, w, at::Tensor(), g, true);
    const auto exact = run_convolution_pass(
        [&](auto& x, auto& w, auto& b) { return at::conv1d(x, w, b, 1, padding, 1); }, rounded(x), rounded(w),
        at::Tensor(), rounded(g), false);
    ASSERT_EQ(mine.y.scalar_type(), at::kBFloat16);
    ASSERT_EQ(mine.grad_weight.scalar_type(), at::kFloat);
    ASSERT_EQ(mine.grad_x.scalar_type(), input_dtype);
    EXPECT_LT(error_to_exact(mine.y, exact.y), 8e-3);
    EXPECT_LT(error_to_exact(mine.grad_weight, exact.grad_weight), 1e-5);
    EXPECT_LT(error_to_exact(mine.grad_x, exact.grad_x), input_dtype == at::kFloat ? 1e-5 : 8e-3);
    // Autocast's own convolution of the same operands, for scale: as close as its bf16 output allows.
    const auto autocast = run_convolution_pass(
        [&](auto& x, auto& w, auto& b) { return at::conv1d(x, w, b, 1, padding, 1); }, x, w, at::Tensor(), g, true);
    EXPECT_LT(error_to_exact(autocast.y, exact.y), 8e-3);
  }
}

TEST(Conv1dProducts, ForTrainingTakesProductsOnlyForLongKernelsInBf16) {
  torch::manual_seed(9);
  const auto x = torch::randn({2, 6, 40});
  const auto g = torch::randn({2, 8, 40});
  const auto for_training = [](int64_t padding) {
    return [padding](auto& x, auto& w, auto& b) { return conv1d_for_training(x, w, b, 1, padding, 1); };
  };
  const auto aten = [](int64_t padding) {
    return [padding](auto& x, auto& w, auto& b) { return at::conv1d(x, w, b, 1, padding, 1); };
  };
  const auto shortw = torch::randn({8, 6, 5}), longw = torch::randn({8, 6, kConv1dProductsMinTaps}) * 0.2;
  const int64_t long_padding = (kConv1dProductsMinTaps - 1) / 2;
  // fp32, and short kernels in bf16: at::conv1d itself, bit for bit.
  for (const bool bf16 : {false, true}) {
    const auto mine = run_convolution_pass(for_training(2), x, shortw, at::Tensor(), g, bf16);
    const auto theirs = run_convolution_pass(aten(2), x, shortw, at::Tensor(), g, bf16);
    EXPECT_TRUE(at::equal(mine.y, theirs.y));
    EXPECT_TRUE(at::equal(mine.grad_weight, theirs.grad_weight));
  }
  const auto fp32 = run_convolution_pass(for_training(long_padding), x, longw, at::Tensor(), g, false);
  const auto fp32_aten = run_convolution_pass(aten(long_padding), x, longw, at::Tensor(), g, false);
  EXPECT_TRUE(at::equal(fp32.y, fp32_aten.y));
  // A long kernel in bf16: the products, whose weight gradient is fp32 (autocast's is rounded to bf16).
  const auto mine = run_convolution_pass(for_training(long_padding), x, longw, at::Tensor(), g, true);
  const auto products = run_convolution_pass(
      [&](auto& x, auto& w, auto& b) { return conv1d_products(x, w, b, long_padding, 1); }, x, longw, at::Tensor(), g,
      true);
  EXPECT_TRUE(at::equal(mine.y, products.y));
  EXPECT_TRUE(at::equal(mine.grad_weight, products.grad_weight));
  EXPECT_TRUE(at::equal(mine.grad_x, products.grad_x));
  // Without gradients (evaluation) it is at::conv1d again.
  torch::NoGradGuard no_grad;
  AutocastScope autocast(Precision::kBf16, torch::Device(torch::kCPU));
  EXPECT_TRUE(at::equal(conv1d_for_training(x, longw, at::Tensor(), 1, long_padding, 1),
                        at::conv1d(x, longw, at::Tensor(), 1, long_padding, 1)));
}

TEST(Conv1dProducts, RefusesPaddingBeyondTheSpan) {
  const auto x = torch::randn({1, 2, 8});
  const auto w = torch::randn({3, 2, 3});
  EXPECT_THROW(conv1d_products(x, w, at::Tensor(), 3, 1), Error);   // span 3: at most 2
  EXPECT_THROW(conv1d_products(x, w, at::Tensor(), 0, 5), Error);   // span 11 over 8 frames: no output
  EXPECT_THROW(conv1d_products(x, torch::randn({3, 4, 3}), at::Tensor(), 1, 1), Error);  // channels differ
}

}  // namespace
}  // namespace mixseq
