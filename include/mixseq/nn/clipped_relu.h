// clipped_relu(x, ceiling) = min(max(x, 0), ceiling): PyTorch's nn.Hardtanh(0, ceiling), the
// activation of Wave2Letter+ and DeepSpeech2 (ceiling 20; models/conv_ctc.h,
// models/deepspeech2.h). Its gradient passes where 0 < x < ceiling (Hardtanh's: not at the
// clip points themselves), in one pass over the input and the incoming gradient.
//
// Why not LibTorch's: 1.13's CPU hardtanh has no bf16 backward, and clamp's backward is four
// operators (ge, le, logical_and, where) over the whole tensor: about 15 ms of a DeepSpeech2
// bench step, whose first convolution's output alone holds 3 M values.
#pragma once

#include <torch/types.h>

namespace mixseq {

// Any shape; fp32 and bf16 CPU tensors take the one-pass backward, others an ATen composition
// of the same gradient.
torch::Tensor clipped_relu(const torch::Tensor& x, double ceiling);

}  // namespace mixseq
