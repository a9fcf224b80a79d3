// The relative shift of Transformer-XL's positional attention term (Dai et al. 2019, appendix B;
// RelMultiHeadAttn._rel_shift in kimiyoung/transformer-xl, pytorch/mem_transformer.py).
//
// With T queries that are the last T of K = M + T positions and relative embeddings r listed for
// the distances K-1, K-2, ..., 0, the products x[i, c] = q_i . r_c are scored per (query,
// distance). Attention needs them per (query, key): query i (absolute position M + i) and key j
// are M + i - j apart, which is column c = T - 1 - i + j. So
//
//   y[..., i, j] = x[..., i, j + T - 1 - i]    for j <= M + i (keys the query may see).
//
// The entries above that band (future keys, which the causal mask hides) hold other entries of x,
// as they hold zeros or other entries in the reference: a caller must mask them.
//
// The reference pads a zero column, reinterprets the [T, K + 1] matrix as [K + 1, T] and drops a
// row: a copy of the padded tensor forward and two passes backward. Here y reads x through one
// strided view (row stride K - 1 instead of K, offset T - 1), copied once; the gradient is the
// exact gradient of that read (the band's entries go back to their column, the rest to theirs).
#pragma once

#include <torch/types.h>

namespace mixseq {

// x [..., T, K] with T <= K -> y [..., T, K] (contiguous), as above; differentiable.
torch::Tensor relative_shift(const torch::Tensor& x);

// For hand-written backward passes, without autograd: the strided view that relative_shift
// copies (x contiguous [..., T, K]), and the gradient of x given the gradient of that view.
torch::Tensor relative_shift_view(const torch::Tensor& x);
torch::Tensor relative_shift_backward(const torch::Tensor& grad);

// content + relative_shift(position) in one pass (the attention's two score terms), without the
// shifted copy; content and position [..., T, K] of one shape -> [..., T, K]; differentiable.
torch::Tensor add_relative_shift(const torch::Tensor& content, const torch::Tensor& position);

}  // namespace mixseq
