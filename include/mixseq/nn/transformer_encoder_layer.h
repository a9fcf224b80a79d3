// TransformerEncoderLayer: self-attention then a position-wise feed-forward network
// (Vaswani et al. 2017, §3.1 and §3.3), each wrapped as in fairseq's TransformerEncoderLayer:
//
//   post-norm (paper):  x = LayerNorm(x + Dropout(Sublayer(x)))
//   pre-norm:           x = x + Dropout(Sublayer(LayerNorm(x)))
//
// with Sublayer = SelfAttention, then the feed-forward network (nn/residual_sublayer.h,
// nn/positionwise_feed_forward.h).
//
// Quantization points (nn/quantization_point.h) on the residual adds, for simulated quantization:
// "self_attn_residual_add", "ffn_residual_add".
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include "mixseq/nn/multihead_attention.h"
#include "mixseq/nn/positionwise_feed_forward.h"
#include "mixseq/nn/quantization_point.h"
#include "mixseq/nn/transformer_layer_options.h"

namespace mixseq {

class TransformerEncoderLayerImpl : public torch::nn::Module {
 public:
  explicit TransformerEncoderLayerImpl(const TransformerLayerOptions& options);

  // x [B, S, D], pad_mask [B, S] bool (true at padding) -> [B, S, D]. Padded positions are
  // never attended to; their own outputs are meaningless.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& pad_mask);

 private:
  bool normalize_before_;
  MultiheadAttention self_attn_;
  torch::nn::LayerNorm self_attn_layer_norm_;
  PositionwiseFeedForward feed_forward_;
  torch::nn::LayerNorm final_layer_norm_;
  double dropout_;  // after each sublayer (nn/residual_sublayer.h)
  QuantizationPoint self_attn_residual_add_;
  QuantizationPoint ffn_residual_add_;
};
TORCH_MODULE(TransformerEncoderLayer);

}  // namespace mixseq
