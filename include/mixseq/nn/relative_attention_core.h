// The core of Transformer-XL's relative attention (nn/relative_multihead_attention.h), between
// the projections and o_net: for each head, query i and key j,
//
//   score(i, j) = (q_i + u) . k_j  +  shift((q + v) r^T)(i, j)       (q already scaled by 1/sqrt(Dh))
//   heads_i     = sum_j Dropout(softmax_j(masked score))(i, j) v_j
//
// with the relative shift of nn/relative_shift.h. Two kernels compute it:
//   fused     CPU, fp32/fp64, a CBLAS and no autocast (nn/batched_matmul.h's path): one autograd
//             node with a hand-written backward. The shifted scores are added in place, masked in
//             place, the dropout mask drawn in the pass that applies it, and the gradients of the
//             keys and values written into one [B, K, 2, H, Dh] buffer (autograd would zero and
//             copy one per select of k and v).
//   plain     the same from differentiable ATen operations (and batched_matmul); everywhere else,
//             e.g. under bf16 autocast or on the GPU.
#pragma once

#include <torch/types.h>

#include "mixseq/nn/scaled_dot_product_attention.h"  // AttentionKernel

namespace mixseq {

// q_u, q_v [B, T, H, Dh]: the scaled queries plus u (r_w_bias) and plus v (r_r_bias), contiguous;
// key_value [B, K, 2 H Dh]: per position H Dh key features, then H Dh value features; r_k
// [K, H, Dh]: the projected relative positions for the distances K-1 .. 0; blocked [T, K] bool
// (true: query i may not see key j; at least the keys after it) or undefined; dropatt: dropout on
// the probabilities while training. -> heads [B, T, H, Dh], contiguous.
torch::Tensor relative_attention_core(const torch::Tensor& q_u, const torch::Tensor& q_v,
                                      const torch::Tensor& key_value, const torch::Tensor& r_k,
                                      const torch::Tensor& blocked, double dropatt, bool training,
                                      AttentionKernel kernel = AttentionKernel::kAuto);

}  // namespace mixseq
