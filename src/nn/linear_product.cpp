#include "mixseq/nn/linear_product.h"

#include <ATen/ATen.h>

#include "mixseq/nn/cpu_bf16_linear.h"
#include "mixseq/nn/cpu_float_linear.h"

namespace mixseq {

torch::Tensor linear_product(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  if (takes_cpu_bf16_linear(x)) return cpu_bf16_linear(x, weight, bias);
  if (takes_cpu_float_linear(x, weight, bias)) return cpu_float_linear(x, weight, bias);
  return at::linear(x, weight, bias);
}

torch::Tensor linear_relu_product(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  if (takes_cpu_float_linear(x, weight, bias)) return cpu_float_linear_relu(x, weight, bias);
  return linear_product(x, weight, bias).relu_();
}

}  // namespace mixseq
