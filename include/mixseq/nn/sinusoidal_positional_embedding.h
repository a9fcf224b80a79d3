// Sinusoidal positional embeddings (Vaswani et al. 2017, §3.5) in fairseq's layout
// (SinusoidalPositionalEmbedding.get_embedding): for position p and i < D/2,
//
//   e[p, i]         = sin(p * 10000^(-i / (D/2 - 1)))
//   e[p, D/2 + i]   = cos(p * 10000^(-i / (D/2 - 1)))
//
// sines in the first half, cosines in the second (the paper interleaves them; the layout
// only permutes features). Positions count from 0 here, where fairseq starts after its
// padding index. Nothing is learnt, so this is a function and adds no parameters.
#pragma once

#include <torch/types.h>

#include <cstdint>

namespace mixseq {

// Embeddings of positions first .. first + count - 1 -> [count, dim], fp32 on `device`.
// dim must be even and at least 4.
torch::Tensor sinusoidal_positional_embedding(int64_t first, int64_t count, int64_t dim, const torch::Device& device);

}  // namespace mixseq
