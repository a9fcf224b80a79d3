// The attention of nn/scaled_dot_product_attention.h, softmax(q kᵀ / sqrt(Dh) + mask) v, forward
// and backward as one autograd node for fp32 on the CPU: the Transformer's training and
// validation passes where LibTorch has no fused attention of its own (1.13).
//
// The plain kernel there is six operators and six nodes a call: a product of q by the scale, the
// scores' product, masked_fill, at::softmax, dropout, the context's product; backward adds a
// contiguous copy of each of q's, k's and v's gradients before the projections' products can take
// them. Here each (batch, head) is one task on LibTorch's threads, its matrices in place where the
// projections left them ([B, T, H, Dh] seen as [B, H, T, Dh]): the scores' product with the scale
// as BLAS's alpha, then the mask and the softmax in one sweep of each row (nn/softmax_rows.h), then
// the context's product, written straight into [B, T, H, Dh] so that merging the heads copies
// nothing; backward is one task per (batch, head) too, its five products and the softmax's
// gradient in the L1 cache, and writes q's, k's and v's gradients into [B, T, H, Dh] as well.
// The weights after the softmax are kept for backward ([B, H, T, S]); dropout on them
// (nn/hashed_dropout.h) runs between the two forward products and keeps its mask.
//
// The same values as the plain kernel to fp32 rounding: the softmax's exp is nn/softmax_rows.h's.
#pragma once

#include <torch/types.h>

namespace mixseq {

// Whether float_attention_core takes q [B, H, T, Dh], k and v [B, H, S, Dh]: fp32 on the CPU,
// autocast off, each matrix with unit stride along Dh, mixseq built with a CBLAS, and ATen not held
// to its baseline kernels (ATEN_CPU_CAPABILITY=default: the bit-exact golden runs keep the plain
// kernel, as they keep at::linear; nn/cpu_float_linear.h).
bool takes_float_attention_core(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v);

// q [B, H, T, Dh], k and v [B, H, S, Dh]; blocked: undefined, or bool [B or 1, 1, T or 1, S], true
// where a query may not see a key (every query must keep one) -> [B, H, T, Dh], stored as
// [B, T, H, Dh]. dropout_p > 0 drops weights (training). Differentiable in q, k and v.
torch::Tensor float_attention_core(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                   const torch::Tensor& blocked, double dropout_p);

}  // namespace mixseq
