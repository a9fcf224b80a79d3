// TransformerXlLayer: one layer of Transformer-XL (Dai et al. 2019; the reference's
// RelPartialLearnableDecoderLayer in kimiyoung/transformer-xl, pytorch/mem_transformer.py):
// relative multi-head attention over [memory; segment] (nn/relative_multihead_attention.h),
// then the position-wise feed-forward network, each with a residual connection, dropout and a
// LayerNorm:
//
//   post-norm (default):  y = LN(x + Dropout(Attn(context)));         out = LN(y + Dropout(FFN(y)))
//   pre_lnorm:            y = x + Dropout(Attn(LN(context)));         out = y + Dropout(FFN(LN(y)))
//
// where x is the segment (the last T positions of the context) and FFN(z) =
// fc2(Dropout(ReLU(fc1(z)))), the reference's CoreNet. Under pre_lnorm the memory is normalised
// with the segment, as the reference does. The FFN is written here rather than taken from
// nn/positionwise_feed_forward.h because its dropouts are nn/hashed_dropout.h's (ReLU and dropout
// in one pass), which the translation Transformer does not use.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

#include "mixseq/nn/cpu_float_linear.h"
#include "mixseq/nn/relative_multihead_attention.h"

namespace mixseq {

struct TransformerXlLayerOptions {
  int64_t d_model = 0;     // D, the width of the residual stream
  int64_t n_head = 1;      // H, attention heads
  int64_t d_head = 0;      // Dh, the width of each head
  int64_t d_inner = 0;     // inner width of the feed-forward network
  double dropout = 0.0;    // after the attention, inside and after the feed-forward network; 0 disables
  double dropatt = 0.0;    // on the attention probabilities; 0 disables
  bool pre_lnorm = false;  // false: LayerNorm after each residual add; true: on each sublayer's input
};

class TransformerXlLayerImpl : public torch::nn::Module {
 public:
  explicit TransformerXlLayerImpl(const TransformerXlLayerOptions& options);

  // x [B, T, D]: the segment's input; context [B, K, D]: the memory of this layer's input, then x
  // (its last T positions); r, r_w_bias, r_r_bias, blocked as for
  // RelativeMultiheadAttention::forward. -> [B, T, D]
  // memory_key_value: undefined, or the keys and values [B, M, 2 H Dh] of the memory positions
  // that an earlier call returned through `key_value` while key_value_version() was what it is
  // now; then only the segment is projected (and context is not read). key_value (optional, out):
  // the keys and values of all K positions, to keep for the next segment.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& context, const torch::Tensor& r,
                        const torch::Tensor& r_w_bias, const torch::Tensor& r_r_bias, const torch::Tensor& blocked,
                        const torch::Tensor& memory_key_value = {}, torch::Tensor* key_value = nullptr);

  // Changes whenever a weight that the keys and values depend on changes (see
  // RelativeMultiheadAttention::key_value_version; under pre_lnorm also the LayerNorm's).
  int64_t key_value_version() const;

 private:
  bool pre_lnorm_;
  double dropout_;
  RelativeMultiheadAttention attn_;
  torch::nn::LayerNorm attn_layer_norm_;
  torch::nn::Linear fc1_;  // D -> d_inner
  torch::nn::Linear fc2_;  // d_inner -> D
  torch::nn::LayerNorm ff_layer_norm_;
  TransposedWeight fc1_columns_, fc2_columns_;  // evaluation's [K, N] copies (nn/cpu_float_linear.h)
};
TORCH_MODULE(TransformerXlLayer);

}  // namespace mixseq
