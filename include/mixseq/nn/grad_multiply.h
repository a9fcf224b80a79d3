// grad_multiply(x, scale): x unchanged forward, its gradient multiplied by `scale` backward
// (fairseq's GradMultiply). ConvS2S scales the encoder output's gradient by 1 / (2 * attention
// layers), since every attention layer of the decoder sends gradient back into it (Gehring et
// al. 2017, §3.4).
#pragma once

#include <torch/types.h>

namespace mixseq {

torch::Tensor grad_multiply(const torch::Tensor& x, double scale);  // [...] -> [...], a copy

}  // namespace mixseq
