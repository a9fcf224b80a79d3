#include "nn/spectral_products.h"

#include <torch/utils.h>

#include <vector>

#include "mixseq/util/error.h"

namespace mixseq::spectral {

torch::Tensor scaled_weight(const torch::Tensor& weight, const torch::Tensor& scale, const char* who) {
  torch::NoGradGuard no_grad;
  torch::Tensor w = weight.detach().to(torch::kFloat);
  if (!scale.defined()) return w;
  const int64_t out_channels = w.size(0);
  MIXSEQ_CHECK(scale.numel() == out_channels, who, ": the scale has ", scale.numel(), " values for ", out_channels,
               " output channels");
  std::vector<int64_t> shape(static_cast<size_t>(w.dim()), 1);
  shape[0] = out_channels;
  return w * scale.detach().to(w.options()).view(shape);
}

torch::Tensor checked_bias(const torch::Tensor& bias, int64_t out_channels, const char* who) {
  if (!bias.defined()) return {};
  MIXSEQ_CHECK(bias.numel() == out_channels, who, ": the bias has ", bias.numel(), " values for ", out_channels,
               " output channels");
  return bias.detach().to(torch::kFloat).reshape({out_channels}).contiguous();
}

torch::Tensor gauss_spectra(const torch::Tensor& per_bin) {
  const torch::Tensor re = at::real(per_bin), im = at::imag(per_bin);
  return torch::stack({re, im, re + im}).contiguous();
}

}  // namespace mixseq::spectral
