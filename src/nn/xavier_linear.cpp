#include "mixseq/nn/xavier_linear.h"

#include <torch/nn/init.h>

namespace mixseq {

QuantizableLinear xavier_linear(int64_t in_features, int64_t out_features, bool bias, double gain) {
  QuantizableLinear linear(torch::nn::LinearOptions(in_features, out_features).bias(bias));
  torch::nn::init::xavier_uniform_(linear->weight, gain);
  if (bias) torch::nn::init::zeros_(linear->bias);
  return linear;
}

}  // namespace mixseq
