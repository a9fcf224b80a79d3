// x Wᵀ + b, as at::linear computes it, by the fastest path this process has for its dtype on
// the CPU: a bf16 product (bf16 x, or CPU autocast in bf16) through nn/cpu_bf16_linear.h, an fp32
// one through oneDNN's sgemm (nn/cpu_float_linear.h), anything else (other devices, fp64,
// fp16, PyTorch 2.x's CPU fp32) through at::linear. Layers whose weights are plain tensors or
// torch::nn::Linear modules call it in place of at::linear; QuantizableLinear runs its float
// products through it.
#pragma once

#include <torch/types.h>

namespace mixseq {

class TransposedWeight;

// x [..., K], weight [N, K], bias [N] or undefined -> [..., N], differentiable as at::linear.
torch::Tensor linear_product(const torch::Tensor& x, const torch::Tensor& weight,
                             const torch::Tensor& bias = torch::Tensor());

// relu(linear_product(x, weight, bias)), the ReLU fused with the product where it goes through
// oneDNN's sgemm (nn/cpu_float_linear.h's cpu_float_linear_relu); elsewhere the product, then an
// in-place ReLU (autograd's ReLU backward reads its output, so the product's buffer serves).
torch::Tensor linear_relu_product(const torch::Tensor& x, const torch::Tensor& weight,
                                  const torch::Tensor& bias = torch::Tensor());

// The two above with x (s W)ᵀ (s = weight_scale; W itself where it is 1) for a layer that holds
// a TransposedWeight for W: from its kept [K, N] copy where nothing is recorded and the product
// is fp32 through oneDNN's sgemm (TransposedWeight::applies); elsewhere as above, of `weight *
// weight_scale`, and the copy dropped. Evaluation's feed-forward and attention projections of
// Transformer-XL (nn/transformer_xl_layer.h).
torch::Tensor linear_product(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                             TransposedWeight& kept, double weight_scale = 1.0);
torch::Tensor linear_relu_product(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                                  TransposedWeight& kept);

}  // namespace mixseq
