// WeightNormLinear: a linear layer with weight normalisation (Salimans & Kingma 2016),
// y = x W^T + b with W = g * V / ||V|| (one norm per output row), the parameters kept as
// torch.nn.utils.weight_norm keeps them: "weight_g" [out, 1] and "weight_v" [out, in], plus
// "bias" [out]. This is fairseq's fconv Linear(): V ~ N(0, sqrt((1 - dropout) / in)) (Gehring
// et al. 2017, §3.4: the variance that keeps activations' variance through a layer whose input
// had dropout p), b = 0, and g starting at ||V||, so that W = V at initialisation.
//
// LibTorch has no weight_norm module; the effective weight is at::_weight_norm(V, g, 0),
// recomputed by every forward() so that gradients reach g and V.
// Under autocast the product runs in the autocast dtype. Not thread-safe in training.
//
// Post-training quantization (quant/) reaches the product through the child "product", a
// QuantizableLinear view of the derived weight and the bias (nn/quantizable_linear.h; plan names
// such as "decoder_fc3.product"): while it is observed or quantized, forward() runs through it;
// otherwise through at::linear as above. It registers no parameters: checkpoints are unchanged.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include <cstdint>

#include "mixseq/nn/quantizable_linear.h"

namespace mixseq {

struct WeightNormLinearOptions {
  int64_t in_features = 0;   // I
  int64_t out_features = 0;  // O
  double dropout = 0.0;      // the dropout on this layer's input, for the initial spread only; 0 = none
};

class WeightNormLinearImpl : public torch::nn::Module {
 public:
  explicit WeightNormLinearImpl(const WeightNormLinearOptions& options);

  torch::Tensor forward(const torch::Tensor& x);  // [..., I] -> [..., O]
  torch::Tensor weight() const;                   // g * V / ||V||, [O, I]

  torch::Tensor weight_g;  // [O, 1]
  torch::Tensor weight_v;  // [O, I]
  torch::Tensor bias;      // [O]

 private:
  QuantizableLinear product_{nullptr};  // the quantizable view of weight() and bias
};
TORCH_MODULE(WeightNormLinear);

}  // namespace mixseq
