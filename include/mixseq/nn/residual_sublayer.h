// The residual wrapping of every Transformer sublayer (attention, feed-forward), as fairseq's
// encoder and decoder layers do it:
//
//   post-norm (paper):  LayerNorm(x + Dropout(Sublayer(x)))
//   pre-norm:           x + Dropout(Sublayer(LayerNorm(x)))
//
// `sum`, when given, is the quantization point of the residual add (nn/quantization_point.h).
#pragma once

#include <torch/nn/modules/normalization.h>

#include <functional>

#include "mixseq/nn/quantization_point.h"

namespace mixseq {

// x [..., D] -> [..., D]; `sublayer` maps [..., D] to [..., D]. Dropout with probability
// `dropout` in training (nn/hashed_dropout.h).
torch::Tensor residual_sublayer(const torch::Tensor& x, torch::nn::LayerNorm& norm, double dropout, bool training,
                                bool normalize_before,
                                const std::function<torch::Tensor(const torch::Tensor&)>& sublayer,
                                QuantizationPointImpl* sum = nullptr);

}  // namespace mixseq
