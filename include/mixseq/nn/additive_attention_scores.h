// The scores of additive attention, score[b, t, s] = v · tanh(q[b, t] + k[b, s]), without
// the [B, T, S, D] tensor in between.
//
// Written as at::tanh(q.unsqueeze(2) + k.unsqueeze(1)) then a product with v, autograd keeps the
// sum and the tanh (each [B, T, S, D]: 7.4M elements at GNMT's bench shape) and backward makes
// four more passes over that size plus the broadcast reductions: 16-29% of a GNMT training
// step or beam batch. Here forward takes each query's scores in one pass over its sentence's
// keys (vectorized_tanh_dots: sixteen tanh in registers, 3-4x Debian's at::tanh, summed against
// v at once); backward walks (b, t) rows in cache-sized blocks, recomputing a block's tanh into
// a small buffer instead of keeping it. The arithmetic runs in fp32 (fp64 for fp64 inputs,
// through the blocks as well).
#pragma once

#include <torch/types.h>

namespace mixseq {

// query [B, T, D], keys [B, S, D], v [D] (floating dtypes; the CPU, else the unfused
// expression) -> scores [B, T, S] in fp32 (fp64 for fp64 inputs). Differentiable in all three inputs.
torch::Tensor additive_attention_scores(const torch::Tensor& query, const torch::Tensor& keys, const torch::Tensor& v);

// The same expression unfused, as autograd sees it (other devices; tests).
torch::Tensor additive_attention_scores_reference(const torch::Tensor& query, const torch::Tensor& keys,
                                                  const torch::Tensor& v);

}  // namespace mixseq
