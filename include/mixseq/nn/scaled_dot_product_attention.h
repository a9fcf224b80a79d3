// Scaled dot-product attention (Vaswani et al. 2017, §3.2.1, eq. 1) over heads already split:
//
//   Attention(Q, K, V) = softmax(Q K^T / sqrt(Dh)) V
//
// with masked keys at -inf before the softmax. Two kernels compute it:
//   plain   matrix product, masked softmax, matrix product; always built, and the only one
//           that returns the weights. The scores are taken to at least fp32 before the
//           softmax, as fairseq's utils.softmax does, so that under autocast the exponentials
//           of bf16/fp16 scores neither overflow nor lose the small weights.
//   fused   at::scaled_dot_product_attention (PyTorch >= 2.0; see src/util/torch_compat.h),
//           which runs flash or memory-efficient kernels on the GPU; where the LibTorch has none
//           (1.13), nn/float_attention_core.h's one node for fp32 on the CPU.
//
// Masks: key_padding_mask [B, S] bool is true at source padding. causal lets the T queries,
// taken to be the last T of S positions, see only keys at their own position or before
// (query i sees keys 0 .. S - T + i), so it serves a whole target (T = S) as well as a step
// that extends a cache of earlier keys (T = 1). Every query must keep at least one key.
#pragma once

#include <torch/types.h>

#include <tuple>

#include "mixseq/nn/quantization_point.h"

namespace mixseq {

enum class AttentionKernel {
  kAuto,   // fused where the LibTorch has it, else nn/float_attention_core.h where it takes the
           // operands, else plain
  kPlain,  // always plain (to compare with the fused kernel, or to get the weights)
};

// The plain kernel's quantization points (nn/quantization_point.h), for simulated quantization;
// null: none. The scores are taken before the mask (-inf has no place on a grid).
struct AttentionPoints {
  QuantizationPointImpl* scores = nullptr;   // Q K^T / sqrt(Dh), the softmax's input
  QuantizationPointImpl* weights = nullptr;  // the softmax's output
  QuantizationPointImpl* context = nullptr;  // weights V
};

// q [B, H, T, Dh], k and v [B, H, S, Dh] -> output [B, H, T, Dh], weights [B, H, T, S] (at
// least fp32; exactly 0 at masked keys; before dropout). dropout_p drops weights (0 in eval).
std::tuple<torch::Tensor, torch::Tensor> plain_attention(const torch::Tensor& q, const torch::Tensor& k,
                                                         const torch::Tensor& v, const torch::Tensor& key_padding_mask,
                                                         bool causal, double dropout_p,
                                                         const AttentionPoints& points = {});

// The output of plain_attention, computed by `kernel`.
torch::Tensor scaled_dot_product_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                           const torch::Tensor& key_padding_mask, bool causal, double dropout_p,
                                           AttentionKernel kernel = AttentionKernel::kAuto);

}  // namespace mixseq
