#include "mixseq/nn/positionwise_feed_forward.h"

#include <ATen/ATen.h>

#include "mixseq/nn/hashed_dropout.h"
#include "mixseq/nn/xavier_linear.h"

namespace mixseq {

PositionwiseFeedForward::PositionwiseFeedForward(torch::nn::Module& layer, const TransformerLayerOptions& options)
    : fc1_(layer.register_module("fc1", xavier_linear(options.embed_dim, options.ffn_dim))),
      fc2_(layer.register_module("fc2", xavier_linear(options.ffn_dim, options.embed_dim))),
      activation_dropout_(options.activation_dropout),
      layer_(layer) {}

torch::Tensor PositionwiseFeedForward::operator()(const torch::Tensor& x) {
  if (!layer_.is_training() || activation_dropout_ == 0.0) return fc2_(fc1_->forward_relu(x));
  return fc2_(hashed_relu_dropout(fc1_(x), activation_dropout_, /*training=*/true));
}

}  // namespace mixseq
