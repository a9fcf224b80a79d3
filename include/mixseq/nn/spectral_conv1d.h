// Spectral evaluation of a 1-D convolution (stride 1, any dilation): the same output as
// at::conv1d up to float rounding, computed with real FFTs by overlap-save, for inference.
//
// A convolution of K taps at dilation d spans S = (K - 1) d + 1 input frames. Overlap-save cuts the
// zero-padded input into segments of N (the FFT size) frames that overlap by S - 1, so that each
// gives L = N - S + 1 output frames; in the frequency domain the convolution is, per frequency bin,
// one complex product of the segments' spectra [B * segments, Ci] with the kernel's spectra
// [Ci, Co]. Per output frame that costs about (N / 2 + 1) / L * 3 Ci Co multiply-adds (three real
// GEMMs per bin, as Gauss multiplied complex numbers) and two FFTs, against K Ci Co for the direct convolution:
// 3-8x fewer for Jasper's kernels of 11 to 29 taps at 256 channels (docs/speech.md has the figures).
//
// The kernel's spectra are computed once (plan_spectral_conv1d) and reused over batches: the plan
// is tied to the weights it was made from. A per-output-channel scale and bias can be folded in,
// which is how an inference-mode batch norm after the convolution (y = x * scale + bias) costs
// nothing. No autograd: the plan's spectra are constants.
//
// Dimension alphabet: B batch, Ci input and Co output channels, T input frames, T' output frames
// (T + 2 padding - S + 1), N FFT size, F = N / 2 + 1 frequency bins.
#pragma once

#include <torch/types.h>

#include <cstdint>

namespace mixseq {

struct SpectralConv1dPlan {
  torch::Tensor spectra;     // [3, F, Ci, Co] float: the kernel's spectra, real parts, imaginary parts and
                             // their sums (Gauss's three real products for one complex product)
  torch::Tensor bias;        // [Co] added to every output frame; undefined = none
  int64_t fft_size = 0;      // N, a power of two
  int64_t span = 0;          // S = (K - 1) * dilation + 1
  int64_t padding = 0;       // zero frames before the input (and at least as many after it)
  int64_t in_channels = 0;   // Ci
  int64_t out_channels = 0;  // Co
};

// The FFT size that an estimate of both times prefers for a convolution of `taps` taps spanning
// `span` frames, or 0 where the direct convolution is faster: about 6 taps or fewer at 256
// channels, 7 or fewer at 64. The estimate is fitted to bench/spectral_conv_bench's figures on one
// core (docs/speech.md) and made for a reference load of 8 x 200 output frames, not the batch at
// hand, so that the method, and with it an utterance's output, does not depend on its batch: to
// the bit where the BLAS rounds a row of a product alike whatever the rows beside it (OpenBLAS's
// AVX-512 kernels, SkylakeX and Cooperlake), to the last bits elsewhere (its Haswell and Zen
// kernels, on AVX2 CPUs, round a product's last rows otherwise).
int64_t spectral_conv1d_fft_size(int64_t taps, int64_t span, int64_t in_channels, int64_t out_channels);

// Plans at::conv1d(x, weight, {}, 1, padding, dilation) followed by y * scale + bias per output
// channel. weight [Co, Ci, K] (float or any floating type: the spectra are float); scale and bias
// [Co] or undefined (1 and 0). fft_size: a power of two >= S + 1.
SpectralConv1dPlan plan_spectral_conv1d(const torch::Tensor& weight, int64_t dilation, int64_t padding,
                                        int64_t fft_size, const torch::Tensor& scale = {},
                                        const torch::Tensor& bias = {});

// x [B, Ci, T] float -> [B, Co, T'] float. Errors if T' < 1 or the channels differ from the plan's.
torch::Tensor spectral_conv1d(const torch::Tensor& x, const SpectralConv1dPlan& plan);

}  // namespace mixseq
