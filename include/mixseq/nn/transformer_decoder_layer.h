// TransformerDecoderLayer: masked self-attention, encoder-decoder attention, then a
// position-wise feed-forward network (Vaswani et al. 2017, §3.1), each wrapped in a residual
// connection and a LayerNorm after (post-norm) or before (pre-norm) it, as in fairseq's
// TransformerDecoderLayer (nn/residual_sublayer.h, nn/positionwise_feed_forward.h).
//
// One code path serves training and search: the layer reads the last T target positions and
// an IncrementalKeyValueCache of its self-attention keys and values at the positions before
// them, which it extends. Training passes the whole target and an empty cache; search one token per step.
//
// Quantization points (nn/quantization_point.h) on the residual adds, for simulated quantization:
// "self_attn_residual_add", "encoder_attn_residual_add", "ffn_residual_add".
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include <tuple>

#include "mixseq/nn/multihead_attention.h"
#include "mixseq/nn/positionwise_feed_forward.h"
#include "mixseq/nn/quantization_point.h"
#include "mixseq/nn/transformer_layer_options.h"

namespace mixseq {

class TransformerDecoderLayerImpl : public torch::nn::Module {
 public:
  explicit TransformerDecoderLayerImpl(const TransformerLayerOptions& options);

  // The encoder output's keys and values for encoder_attn: encoder_output [B, S, D] -> each
  // [B, H, S, Dh]. Computed once per batch.
  KeyValueCache project_encoder_output(const torch::Tensor& encoder_output);

  // x [B, T, D]: the target positions after those in self_cache (which gains their keys and
  // values); encoder from project_encoder_output; source_pad_mask [B, S] bool.
  // -> [B, T, D], and with need_weights encoder_attn's weights [B, H, T, S] (else undefined).
  std::tuple<torch::Tensor, torch::Tensor> forward(const torch::Tensor& x, IncrementalKeyValueCache& self_cache,
                                                   const KeyValueCache& encoder, const torch::Tensor& source_pad_mask,
                                                   bool need_weights = false);

 private:
  bool normalize_before_;
  MultiheadAttention self_attn_;
  torch::nn::LayerNorm self_attn_layer_norm_;
  MultiheadAttention encoder_attn_;
  torch::nn::LayerNorm encoder_attn_layer_norm_;
  PositionwiseFeedForward feed_forward_;
  torch::nn::LayerNorm final_layer_norm_;
  double dropout_;  // after each sublayer (nn/residual_sublayer.h)
  QuantizationPoint self_attn_residual_add_;
  QuantizationPoint encoder_attn_residual_add_;
  QuantizationPoint ffn_residual_add_;
};
TORCH_MODULE(TransformerDecoderLayer);

}  // namespace mixseq
