// What nn/spectral_conv1d.cpp and nn/spectral_conv2d.cpp share: a kernel's spectra as Gauss's
// three real matrices per frequency bin, the checks of the folded scale and bias, segment counts.
#pragma once

#include <torch/types.h>

#include <cstdint>

namespace mixseq::spectral {

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline bool power_of_two(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// weight [Co, ...] times scale [Co] along its first dimension (undefined: the weight itself), as
// float and detached. `who` names the caller in errors.
torch::Tensor scaled_weight(const torch::Tensor& weight, const torch::Tensor& scale, const char* who);

// bias [Co] as a contiguous float tensor (undefined stays undefined), checked against Co.
torch::Tensor checked_bias(const torch::Tensor& bias, int64_t out_channels, const char* who);

// per_bin [bins, Ci, Co] complex -> [3, bins, Ci, Co] float: the real parts, the imaginary parts and
// their sums (x_re w_re, x_im w_im and (x_re + x_im)(w_re + w_im) give a complex product).
torch::Tensor gauss_spectra(const torch::Tensor& per_bin);

}  // namespace mixseq::spectral
