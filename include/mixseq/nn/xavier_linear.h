// fairseq's Linear() helper (fairseq/models/transformer): a linear layer with Glorot &
// Bengio's xavier_uniform weights and zero bias, instead of LibTorch's default (Kaiming
// uniform, for ReLU stacks without normalization).
#pragma once

#include "mixseq/nn/quantizable_linear.h"

#include <cstdint>

namespace mixseq {

// in -> out features; gain scales the xavier bound (fairseq uses 1/sqrt(2) for the attention's
// q, k and v projections).
QuantizableLinear xavier_linear(int64_t in_features, int64_t out_features, bool bias = true, double gain = 1.0);

}  // namespace mixseq
