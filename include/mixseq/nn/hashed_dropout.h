// Dropout (Srivastava et al. 2014) with hashed masks: in training each element is zeroed with probability p and the
// others scaled by 1 / (1 - p); in evaluation it is the identity.
//
// Why not at::dropout: on the CPU it draws its masks with bernoulli_, which in Debian's LibTorch
// (no MKL) takes one double from the mt19937 generator per element, on one thread: ~10 ns an
// element, 70 ms of a 770 ms Transformer-XL training step at the bench shape, and it does not
// get faster with more threads. Here each element's keep/drop bit is a counter-based hash
// (splitmix64 of a per-call seed plus the element's index; Steele et al. 2014), computed in
// parallel in the same pass that writes the output and the mask. The per-call seed is drawn from
// LibTorch's default CPU generator, so torch::manual_seed makes runs repeat. The masks differ
// from at::dropout's (another generator), not their distribution. On other devices at::dropout
// is used.
//
// The mask is kept for backward as a tensor of 0 and 1 / (1 - p) in the input's dtype, as
// at::dropout keeps it; backward is one product.
#pragma once

#include <torch/types.h>

#include <utility>

namespace mixseq {

// x [...] (any floating dtype) -> [...]; p in [0, 1).
torch::Tensor hashed_dropout(const torch::Tensor& x, double p, bool training);

// x + hashed_dropout(branch, p, training), the residual add of a sublayer. On the CPU in training,
// for an fp32 x and an fp32 or bf16 branch, one pass forward and one backward that recomputes the
// draws (nothing kept but the seed; the same draws as hashed_dropout's under the same seed), the
// dropped branch added in fp32 without a rounding to the branch's dtype. Otherwise those two ops.
torch::Tensor residual_dropout(const torch::Tensor& x, const torch::Tensor& branch, double p, bool training);

// hashed_dropout(relu(x), p, training) in one pass forward and one backward (the feed-forward network's
// inner activation).
torch::Tensor hashed_relu_dropout(const torch::Tensor& x, double p, bool training);

// The training-mode kernel alone, without autograd, for hand-written backward passes: x (CPU) ->
// {y, mask} with y = x * mask and mask in {0, 1 / (1 - p)} in x's dtype.
std::pair<torch::Tensor, torch::Tensor> hashed_dropout_with_mask(const torch::Tensor& x, double p);

}  // namespace mixseq
