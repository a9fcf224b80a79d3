// Spectral evaluation of a 2-D convolution without padding (stride 1, or a stride along the first
// axis taken by keeping every s-th row of the stride-1 result): at::conv2d's output up to float
// rounding, for inference. DeepSpeech2's second convolution, 32 -> 32 channels over 21 x 11 taps
// (models/deepspeech2.h), costs 7.4 G multiply-adds directly at its bench shape and about 0.2 G
// here.
//
// As nn/spectral_conv1d.h, in two dimensions: the whole first axis in one FFT of size NH (a power
// of two >= its length, so that no valid output wraps around), the second axis by overlap-save in
// segments of NW; per frequency bin (NH x (NW / 2 + 1) of them), a complex
// [B * segments, Ci] x [Ci, Co] product as Gauss's three real ones.
//
// Dimension alphabet: B batch, Ci and Co channels, H and W the input's two axes, KH x KW the kernel,
// H' = (H - KH) / s + 1 and W' = W - KW + 1 the output's.
#pragma once

#include <torch/types.h>

#include <cstdint>

namespace mixseq {

struct SpectralConv2dPlan {
  torch::Tensor spectra;   // [3, NH (NW / 2 + 1), Ci, Co]: real parts, imaginary parts and their sums
  torch::Tensor bias;      // [Co] added to every output; undefined = none
  int64_t height = 0;      // H: the input's first axis, fixed by the plan
  int64_t fft_height = 0;  // NH
  int64_t fft_width = 0;   // NW
  int64_t kernel_height = 0, kernel_width = 0, stride_height = 1;
  int64_t folds = 1;       // s where only every s-th row's inverse is computed (see the .cpp), else 1
  int64_t in_channels = 0, out_channels = 0;
};

// Plans at::conv2d(x, weight, {}, {stride_height, 1}) followed by y * scale + bias per output
// channel, for inputs whose first axis has `height` rows. weight [Co, Ci, KH, KW]; scale and bias
// [Co] or undefined. fft_width: a power of two > KW.
SpectralConv2dPlan plan_spectral_conv2d(const torch::Tensor& weight, int64_t height, int64_t stride_height,
                                        int64_t fft_width, const torch::Tensor& scale = {},
                                        const torch::Tensor& bias = {});

// x [B, Ci, H, W] float -> [B, Co, H', W'] float. Errors if W' < 1 or x does not fit the plan.
torch::Tensor spectral_conv2d(const torch::Tensor& x, const SpectralConv2dPlan& plan);

}  // namespace mixseq
