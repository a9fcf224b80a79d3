// fairseq's Linear() helper (fairseq/models/transformer): a torch::nn::Linear with Glorot &
// Bengio's xavier_uniform weights and zero bias, instead of LibTorch's default (Kaiming
// uniform, for ReLU stacks without normalization).
#pragma once

#include <torch/nn/modules/linear.h>

#include <cstdint>

namespace mixseq {

// in -> out features; gain scales the xavier bound (fairseq uses 1/sqrt(2) for the attention's
// q, k and v projections).
torch::nn::Linear xavier_linear(int64_t in_features, int64_t out_features, bool bias = true, double gain = 1.0);

}  // namespace mixseq
