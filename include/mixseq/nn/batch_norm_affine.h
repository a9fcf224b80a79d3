// A batch norm in inference mode as the per-channel affine map it is, y = x * scale + shift with
// scale = weight / sqrt(running_var + eps) and shift = bias - running_mean * scale: what the
// recognizers fold into the convolution before it (models/conv_ctc.h, models/deepspeech2.h).
#pragma once

#include <torch/types.h>

namespace mixseq {

struct BatchNormAffine {
  torch::Tensor scale;  // [C]
  torch::Tensor shift;  // [C]
};

BatchNormAffine batch_norm_affine(const torch::Tensor& weight, const torch::Tensor& bias,
                                  const torch::Tensor& running_mean, const torch::Tensor& running_var, double eps);

// The same for a torch::nn::BatchNorm{1,2,3}d module (its affine parameters and statistics).
template <typename Norm>
BatchNormAffine batch_norm_affine(const Norm& norm) {
  return batch_norm_affine(norm.weight, norm.bias, norm.running_mean, norm.running_var, norm.options.eps());
}

}  // namespace mixseq
