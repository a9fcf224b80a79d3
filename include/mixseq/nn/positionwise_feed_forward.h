// The position-wise feed-forward network of the Transformer's encoder and decoder layers
// (Vaswani et al. 2017, §3.3): FFN(x) = fc2(ActivationDropout(ReLU(fc1(x)))), ReLU and dropout
// in one pass (nn/hashed_dropout.h).
//
// Not a module of its own: its parts are registered in the layer that holds it, under
// fairseq's names (fc1, fc2), so a layer's parameters keep fairseq's keys; it drops out while
// that layer is training.
#pragma once

#include <torch/nn/module.h>

#include "mixseq/nn/quantizable_linear.h"
#include "mixseq/nn/transformer_layer_options.h"

namespace mixseq {

class PositionwiseFeedForward {
 public:
  PositionwiseFeedForward(torch::nn::Module& layer, const TransformerLayerOptions& options);

  // [..., embed_dim] -> [..., ffn_dim] -> [..., embed_dim]
  torch::Tensor operator()(const torch::Tensor& x);

 private:
  QuantizableLinear fc1_;
  QuantizableLinear fc2_;
  double activation_dropout_;
  const torch::nn::Module& layer_;
};

}  // namespace mixseq
