#include "mixseq/nn/transformer_decoder_layer.h"

#include <ATen/ATen.h>

#include "mixseq/nn/residual_sublayer.h"

namespace mixseq {

TransformerDecoderLayerImpl::TransformerDecoderLayerImpl(const TransformerLayerOptions& options)
    : normalize_before_(options.normalize_before),
      self_attn_(register_module("self_attn", MultiheadAttention(MultiheadAttentionOptions{
                                                  options.embed_dim, options.num_heads, options.attention_dropout}))),
      self_attn_layer_norm_(register_module("self_attn_layer_norm",
                                            torch::nn::LayerNorm(torch::nn::LayerNormOptions({options.embed_dim})))),
      encoder_attn_(register_module("encoder_attn", MultiheadAttention(MultiheadAttentionOptions{
                                                        options.embed_dim, options.num_heads,
                                                        options.attention_dropout}))),
      encoder_attn_layer_norm_(register_module(
          "encoder_attn_layer_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({options.embed_dim})))),
      feed_forward_(*this, options),
      final_layer_norm_(register_module("final_layer_norm",
                                        torch::nn::LayerNorm(torch::nn::LayerNormOptions({options.embed_dim})))),
      dropout_(options.dropout),
      self_attn_residual_add_(register_module("self_attn_residual_add", QuantizationPoint())),
      encoder_attn_residual_add_(register_module("encoder_attn_residual_add", QuantizationPoint())),
      ffn_residual_add_(register_module("ffn_residual_add", QuantizationPoint())) {}

KeyValueCache TransformerDecoderLayerImpl::project_encoder_output(const torch::Tensor& encoder_output) {
  return encoder_attn_->project_key_value_for_steps(encoder_output);  // each [B, H, S, Dh]
}

std::tuple<torch::Tensor, torch::Tensor> TransformerDecoderLayerImpl::forward(const torch::Tensor& x,
                                                                              IncrementalKeyValueCache& self_cache,
                                                                              const KeyValueCache& encoder,
                                                                              const torch::Tensor& source_pad_mask,
                                                                              bool need_weights) {
  const auto self_attention = [&](const torch::Tensor& y) {  // y [B, T, D]
    self_cache.append(self_attn_->project_key_value_for_steps(y));  // each [B, H, T, Dh]
    // The target is right-padded: causality alone keeps real positions off the padding.
    return self_attn_->forward_incremental(y, self_cache);
  };
  torch::Tensor weights;  // [B, H, T, S]
  const auto encoder_attention = [&](const torch::Tensor& y) {
    torch::Tensor context;
    std::tie(context, weights) = encoder_attn_(y, encoder, source_pad_mask, /*causal=*/false, need_weights);
    return context;  // [B, T, D]
  };
  auto h = residual_sublayer(x, self_attn_layer_norm_, dropout_, is_training(), normalize_before_, self_attention,
                             self_attn_residual_add_.get());
  h = residual_sublayer(h, encoder_attn_layer_norm_, dropout_, is_training(), normalize_before_, encoder_attention,
                        encoder_attn_residual_add_.get());
  return {residual_sublayer(h, final_layer_norm_, dropout_, is_training(), normalize_before_, feed_forward_,
                            ffn_residual_add_.get()),
          weights};  // [B, T, D]
}

}  // namespace mixseq
