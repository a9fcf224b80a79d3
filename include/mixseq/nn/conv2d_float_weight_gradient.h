// conv2d whose weight and bias gradients are taken in fp32 under CPU bf16 autocast, while its
// forward stays in bf16 as autocast would run it: DeepSpeech2's first convolution (one input
// channel, kernel 41 x 11, stride 2 x 2; models/deepspeech2.h).
//
// Why: with one input channel oneDNN's bf16 weight-gradient kernel has nothing to block over. At
// DeepSpeech2's bench shape ([8, 1, 161, 400] in, [32, 1, 41, 11] weight) it took 38-68 ms on the
// AMX Xeon (family 6 model 207, two threads), where the fp32 kernel took 11-25 ms and the bf16
// forward 4-9 ms (fp32: 18-38). So the forward reads the input and weight in bf16 and returns
// bf16, the same kernel and bits as autocast's conv2d; backward widens the output gradient to fp32
// and runs the fp32 kernels against the fp32 input and weight (the sums are no worse than
// autocast's: its weight gradient is rounded to bf16 before it reaches the fp32 parameter).
//
// Anywhere else (no CPU bf16 autocast, weights not fp32, nothing to differentiate) it is
// at::conv2d, autocast included.
#pragma once

#include <torch/types.h>

namespace mixseq {

// x [B, Cin, H, W], weight [Cout, Cin, kH, kW], bias [Cout] or undefined; no dilation or groups.
torch::Tensor conv2d_float_weight_gradient(const torch::Tensor& x, const torch::Tensor& weight,
                                           const torch::Tensor& bias, torch::IntArrayRef stride,
                                           torch::IntArrayRef padding);

}  // namespace mixseq
