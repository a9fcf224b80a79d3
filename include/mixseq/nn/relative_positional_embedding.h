// Transformer-XL's sinusoidal embedding of relative distances (Dai et al. 2019, §3.3; the
// reference's PositionalEmbedding in pytorch/mem_transformer.py): for distance p and i < D/2,
//
//   e[p, i]       = sin(p / 10000^(2i / D))
//   e[p, D/2 + i] = cos(p / 10000^(2i / D))
//
// listed for the distances K-1, K-2, ..., 0 of K keys (the order nn/relative_shift.h expects).
// With clamp_len > 0 every distance above clamp_len uses clamp_len's embedding (the reference's
// evaluation with a memory longer than training saw: clamp_len 400 with mem_len 640 on
// WikiText-103). Not fairseq's layout (nn/sinusoidal_positional_embedding.h divides by D/2 - 1).
// Nothing is learnt: a function, no parameters.
#pragma once

#include <torch/types.h>

#include <cstdint>

namespace mixseq {

// -> [K, D] fp32 on `device`, rows for distances K-1 .. 0 (each clamped to clamp_len when it is
// positive; 0 or -1 clamps nothing). D must be even.
torch::Tensor relative_positional_embedding(int64_t key_length, int64_t dim, int64_t clamp_len,
                                            const torch::Device& device);

}  // namespace mixseq
