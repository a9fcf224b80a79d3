#include "mixseq/nn/transformer_xl_layer.h"

#include "mixseq/nn/residual_sublayer.h"

namespace mixseq {
namespace {

RelativeMultiheadAttentionOptions attention_options(const TransformerXlLayerOptions& options) {
  RelativeMultiheadAttentionOptions attention;
  attention.d_model = options.d_model;
  attention.n_head = options.n_head;
  attention.d_head = options.d_head;
  attention.dropatt = options.dropatt;
  return attention;
}

// The reference's CoreNet: Linear, ReLU, Dropout(dropout), Linear; its final Dropout is the
// residual's.
TransformerLayerOptions feed_forward_options(const TransformerXlLayerOptions& options) {
  TransformerLayerOptions feed_forward;
  feed_forward.embed_dim = options.d_model;
  feed_forward.ffn_dim = options.d_inner;
  feed_forward.activation_dropout = options.dropout;
  return feed_forward;
}

torch::nn::LayerNorm layer_norm(int64_t d_model) { return torch::nn::LayerNorm(torch::nn::LayerNormOptions({d_model})); }

}  // namespace

TransformerXlLayerImpl::TransformerXlLayerImpl(const TransformerXlLayerOptions& options)
    : pre_lnorm_(options.pre_lnorm),
      attn_(register_module("attn", RelativeMultiheadAttention(attention_options(options)))),
      attn_layer_norm_(register_module("attn_layer_norm", layer_norm(options.d_model))),
      ff_(*this, feed_forward_options(options)),
      ff_layer_norm_(register_module("ff_layer_norm", layer_norm(options.d_model))),
      dropout_(register_module("dropout", torch::nn::Dropout(options.dropout))) {}

torch::Tensor TransformerXlLayerImpl::forward(const torch::Tensor& context, int64_t segment_length,
                                              const torch::Tensor& r, const torch::Tensor& r_w_bias,
                                              const torch::Tensor& r_r_bias, const torch::Tensor& blocked) {
  const auto x = context.narrow(1, context.size(1) - segment_length, segment_length);  // [B, T, D]
  const auto attended = dropout_(
      attn_(pre_lnorm_ ? attn_layer_norm_(context) : context, segment_length, r, r_w_bias, r_r_bias, blocked));
  const auto y = pre_lnorm_ ? x + attended : attn_layer_norm_(x + attended);  // [B, T, D]
  return residual_sublayer(y, ff_layer_norm_, dropout_, pre_lnorm_, [this](const torch::Tensor& z) { return ff_(z); });
}

}  // namespace mixseq
