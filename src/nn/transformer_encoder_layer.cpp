#include "mixseq/nn/transformer_encoder_layer.h"

#include "mixseq/nn/residual_sublayer.h"

namespace mixseq {

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(const TransformerLayerOptions& options)
    : normalize_before_(options.normalize_before),
      self_attn_(register_module("self_attn", MultiheadAttention(MultiheadAttentionOptions{
                                                  options.embed_dim, options.num_heads, options.attention_dropout}))),
      self_attn_layer_norm_(register_module("self_attn_layer_norm",
                                            torch::nn::LayerNorm(torch::nn::LayerNormOptions({options.embed_dim})))),
      feed_forward_(*this, options),
      final_layer_norm_(register_module("final_layer_norm",
                                        torch::nn::LayerNorm(torch::nn::LayerNormOptions({options.embed_dim})))),
      dropout_(options.dropout),
      self_attn_residual_add_(register_module("self_attn_residual_add", QuantizationPoint())),
      ffn_residual_add_(register_module("ffn_residual_add", QuantizationPoint())) {}

torch::Tensor TransformerEncoderLayerImpl::forward(const torch::Tensor& x, const torch::Tensor& pad_mask) {
  const auto h = residual_sublayer(x, self_attn_layer_norm_, dropout_, is_training(), normalize_before_, [&](const torch::Tensor& y) {
    return std::get<0>(self_attn_(y, self_attn_->project_key_value(y), pad_mask, /*causal=*/false));
  }, self_attn_residual_add_.get());                                                      // [B, S, D]
  return residual_sublayer(h, final_layer_norm_, dropout_, is_training(), normalize_before_, feed_forward_,
                           ffn_residual_add_.get());  // [B, S, D]
}

}  // namespace mixseq
