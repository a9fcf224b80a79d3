// A convolution's forward and backward in one call, for the tests of the convolutions that replace
// LibTorch's under autocast (nn/conv1d_products.h, nn/conv2d_float_weight_gradient.h) against
// LibTorch's own.
#pragma once

#include <ATen/ATen.h>
#include <torch/torch.h>

#include "mixseq/util/mixed_precision.h"

namespace mixseq::test {

struct ConvolutionPass {
  at::Tensor y, grad_x, grad_weight, grad_bias;  // grad_x undefined without `input_gradient`, grad_bias without a bias
};

// y = conv(x, w, b) on copies that record gradients (under CPU bf16 autocast when `bf16`), then
// backward from the upstream gradient g. `bias` may be undefined.
template <typename Conv>
ConvolutionPass run_convolution_pass(const Conv& conv, const at::Tensor& x, const at::Tensor& weight,
                                     const at::Tensor& bias, const at::Tensor& g, bool bf16,
                                     bool input_gradient = true) {
  auto input = x.detach().clone().requires_grad_(input_gradient);
  auto w = weight.detach().clone().requires_grad_();
  auto b = bias.defined() ? bias.detach().clone().requires_grad_() : at::Tensor();
  at::Tensor y;
  {
    AutocastScope autocast(bf16 ? Precision::kBf16 : Precision::kFp32, torch::Device(torch::kCPU));
    y = conv(input, w, b);
  }
  y.backward(g.to(y.scalar_type()));
  return {y, input.grad(), w.grad(), b.defined() ? b.grad() : at::Tensor()};
}

}  // namespace mixseq::test
