// The position-wise feed-forward network of the Transformer's encoder and decoder layers
// (Vaswani et al. 2017, §3.3): FFN(x) = fc2(ActivationDropout(ReLU(fc1(x)))).
//
// Not a module of its own: its parts are registered in the layer that holds it, under
// fairseq's names (fc1, fc2, activation_dropout), so a layer's parameters keep fairseq's keys.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/dropout.h>

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
  torch::nn::Dropout activation_dropout_;
};

}  // namespace mixseq
