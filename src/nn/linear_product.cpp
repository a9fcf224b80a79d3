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

torch::Tensor linear_product(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                             TransposedWeight& kept, double weight_scale) {
  if (TransposedWeight::applies(x, weight, bias)) return kept.product(x, weight, bias, /*relu=*/false, weight_scale);
  kept.drop();
  return linear_product(x, weight_scale == 1.0 ? weight : weight * weight_scale, bias);
}

torch::Tensor linear_relu_product(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                                  TransposedWeight& kept) {
  if (TransposedWeight::applies(x, weight, bias)) return kept.product(x, weight, bias, /*relu=*/true);
  kept.drop();
  return linear_relu_product(x, weight, bias);
}

}  // namespace mixseq
