#include "mixseq/nn/conv2d_float_weight_gradient.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "convolution_pass.h"

namespace mixseq {
namespace {

using test::run_convolution_pass;

at::Tensor widened_conv(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
  return conv2d_float_weight_gradient(x, w, b, {2, 2}, {1, 0});
}
at::Tensor aten_conv(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
  return at::conv2d(x, w, b, {2, 2}, {1, 0});
}

class Conv2dFloatWeightGradientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    torch::manual_seed(7);
    x = torch::randn({3, 1, 23, 17});  // one input channel, as DeepSpeech2's first convolution
    weight = torch::randn({4, 1, 5, 3}) * 0.3;
    bias = torch::randn({4});
    g = torch::randn({3, 4, 11, 8});  // the output's shape: (23 + 2 - 5) / 2 + 1, (17 - 3) / 2 + 1
  }
  at::Tensor x, weight, bias, g;
};

TEST_F(Conv2dFloatWeightGradientTest, ForwardIsAutocastsConvolutionBitForBit) {
  const auto mine = run_convolution_pass(widened_conv, x, weight, bias, g, /*bf16=*/true, false);
  const auto theirs = run_convolution_pass(aten_conv, x, weight, bias, g, /*bf16=*/true, false);
  ASSERT_EQ(mine.y.scalar_type(), at::kBFloat16);
  ASSERT_EQ(mine.y.sizes(), g.sizes());
  EXPECT_TRUE(at::equal(mine.y, theirs.y));
}

TEST_F(Conv2dFloatWeightGradientTest, WeightAndBiasGradientsAreFp32ConvolutionsOfTheBf16Gradient) {
  const auto mine = run_convolution_pass(widened_conv, x, weight, bias, g, /*bf16=*/true, /*input_gradient=*/true);
  // The fp32 convolution's gradients for the same upstream gradient, rounded to bf16 as the bf16
  // output's gradient is, computed in double.
  const auto g16 = g.to(at::kBFloat16).to(at::kDouble);
  const auto exact =
      run_convolution_pass(aten_conv, x.to(at::kDouble), weight.to(at::kDouble), bias.to(at::kDouble), g16, false, true);
  ASSERT_EQ(mine.grad_weight.scalar_type(), at::kFloat);
  EXPECT_TRUE(at::allclose(mine.grad_weight.to(at::kDouble), exact.grad_weight, 1e-5, 1e-5));
  EXPECT_TRUE(at::allclose(mine.grad_bias.to(at::kDouble), exact.grad_bias, 1e-5, 1e-5));
  EXPECT_TRUE(at::allclose(mine.grad_x.to(at::kDouble), exact.grad_x, 1e-5, 1e-5));
  // Autocast's own weight gradient comes from bf16 operands: further from the exact one.
  const auto autocast = run_convolution_pass(aten_conv, x, weight, bias, g, /*bf16=*/true, true);
  const auto error = [&](const at::Tensor& t) {
    return (t.to(at::kDouble) - exact.grad_weight).abs().max().item<double>();
  };
  EXPECT_LT(error(mine.grad_weight), error(autocast.grad_weight));
  const double scale = exact.grad_weight.abs().max().item<double>();
  EXPECT_TRUE(at::allclose(autocast.grad_weight.to(at::kDouble), exact.grad_weight, 0.05, 0.05 * scale));
}

TEST_F(Conv2dFloatWeightGradientTest, WithoutBf16AutocastItIsConv2d) {
  const auto mine = run_convolution_pass(widened_conv, x, weight, bias, g, /*bf16=*/false, true);
  const auto theirs = run_convolution_pass(aten_conv, x, weight, bias, g, /*bf16=*/false, true);
  EXPECT_TRUE(at::equal(mine.y, theirs.y));
  EXPECT_TRUE(at::equal(mine.grad_weight, theirs.grad_weight));
  EXPECT_TRUE(at::equal(mine.grad_bias, theirs.grad_bias));
  EXPECT_TRUE(at::equal(mine.grad_x, theirs.grad_x));
}

}  // namespace
}  // namespace mixseq
