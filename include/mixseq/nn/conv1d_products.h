// A 1-D convolution (stride 1, any padding and dilation, no groups) trained as three matrix
// products, for the long kernels of the convolutional recognizers (models/conv_ctc.h: Jasper's
// and Wave2Letter+'s 11 to 29 taps at 256 channels and more) under CPU bf16 autocast.
//
// With K taps at dilation d, cols(x) [Ci K, B T'] holds each tap's shifted copy of the input
// (im2col: row (i, k) is x[:, i, k d : k d + T'] of the padded input, for every utterance), and
//   forward   y [Co, B T']  = W [Co, Ci K] cols(x)
//   input     dx [Ci, B T]  = W~ [Ci, Co K] cols(g~)   the same convolution of the output gradient,
//                                                      padded span - 1 - padding each side, with the
//                                                      kernel flipped in time and its channels
//                                                      swapped (no col2im's overlapping adds)
//   weight    dW [Co, Ci K] = g [Co, B T'] cols(x)^T   (the columns made again: K times the input
//                                                      is too much to keep between the passes)
// Each product's operands are bf16, summed in fp32 by oneDNN's GEMM (nn/bf16_matmul.h); the
// output is bf16, as autocast's conv1d returns it, and the weight's (and an fp32 input's)
// gradient comes out in fp32 unrounded, as nn/cpu_bf16_linear.h's do.
//
// Why: LibTorch 1.13's oneDNN convolution (Debian's build) runs these shapes' backward far below
// its forward's rate, the more so the longer the kernel. At [8, 256, 200] with 256 output
// channels on a 2-core Zen 5 (AVX512-BF16, no AMX), a bf16 forward and backward took 11 ms at 11
// taps and 61-75 ms at 21, 25 and 29 (dilation 2), where the three products take 26-32 ms; at 11
// to 17 taps the two are even (docs/benchmarks.md, "Jasper's long kernels as products").
#pragma once

#include <torch/types.h>

#include <cstdint>

namespace mixseq {

// The fewest taps for which conv1d_for_training takes the products.
inline constexpr int64_t kConv1dProductsMinTaps = 19;

// x [B, Ci, T], weight [Co, Ci, K], bias [Co] or undefined -> [B, Co, T'] with T' = T + 2 padding
// - (K - 1) dilation, as at::conv1d(x, weight, bias, 1, padding, dilation), always as products, on
// the CPU. Products in bf16 where x is bf16 or CPU autocast is on in bf16, else in x's dtype (fp32,
// or fp64 for gradient checks). Needs padding <= (K - 1) dilation and T' >= 1. Differentiable in
// x, weight and bias.
torch::Tensor conv1d_products(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                              int64_t padding, int64_t dilation);

// at::conv1d(x, weight, bias, stride, padding, dilation), through conv1d_products where that is
// faster: training (gradients recorded) on the CPU in bf16, stride 1, at least
// kConv1dProductsMinTaps taps. Elsewhere at::conv1d itself, autocast included.
torch::Tensor conv1d_for_training(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                                  int64_t stride, int64_t padding, int64_t dilation);

}  // namespace mixseq
