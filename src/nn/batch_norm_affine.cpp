#include "mixseq/nn/batch_norm_affine.h"

#include <ATen/ATen.h>

namespace mixseq {

BatchNormAffine batch_norm_affine(const torch::Tensor& weight, const torch::Tensor& bias,
                                  const torch::Tensor& running_mean, const torch::Tensor& running_var, double eps) {
  BatchNormAffine affine;
  affine.scale = weight / at::sqrt(running_var + eps);
  affine.shift = bias - running_mean * affine.scale;
  return affine;
}

}  // namespace mixseq
