#include "mixseq/nn/transformer_decoder_layer.h"

#include <ATen/ATen.h>

#include "mixseq/nn/xavier_linear.h"

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
      fc1_(register_module("fc1", xavier_linear(options.embed_dim, options.ffn_dim))),
      fc2_(register_module("fc2", xavier_linear(options.ffn_dim, options.embed_dim))),
      final_layer_norm_(register_module("final_layer_norm",
                                        torch::nn::LayerNorm(torch::nn::LayerNormOptions({options.embed_dim})))),
      dropout_(register_module("dropout", torch::nn::Dropout(options.dropout))),
      activation_dropout_(register_module("activation_dropout", torch::nn::Dropout(options.activation_dropout))) {}

KeyValueCache TransformerDecoderLayerImpl::project_encoder_output(const torch::Tensor& encoder_output) {
  return encoder_attn_->project_key_value(encoder_output);  // each [B, H, S, Dh]
}

std::tuple<torch::Tensor, torch::Tensor> TransformerDecoderLayerImpl::forward(const torch::Tensor& x,
                                                                              KeyValueCache& self_cache,
                                                                              const KeyValueCache& encoder,
                                                                              const torch::Tensor& source_pad_mask,
                                                                              bool need_weights) {
  auto residual = x;                                      // [B, T, D]
  auto h = normalize_before_ ? self_attn_layer_norm_(x) : x;
  auto [keys, values] = self_attn_->project_key_value(h);  // each [B, H, T, Dh]
  if (self_cache.keys.defined()) {
    keys = at::cat({self_cache.keys, keys}, 2);           // [B, H, t + T, Dh]
    values = at::cat({self_cache.values, values}, 2);
  }
  self_cache = {keys, values};
  // The target is right-padded: causality alone keeps real positions off the padding.
  h = std::get<0>(self_attn_(h, self_cache, /*key_padding_mask=*/torch::Tensor(), /*causal=*/true));  // [B, T, D]
  h = residual + dropout_(h);
  if (!normalize_before_) h = self_attn_layer_norm_(h);

  residual = h;
  if (normalize_before_) h = encoder_attn_layer_norm_(h);
  torch::Tensor weights;                                  // [B, H, T, S]
  std::tie(h, weights) = encoder_attn_(h, encoder, source_pad_mask, /*causal=*/false, need_weights);  // [B, T, D]
  h = residual + dropout_(h);
  if (!normalize_before_) h = encoder_attn_layer_norm_(h);

  residual = h;
  if (normalize_before_) h = final_layer_norm_(h);
  h = fc2_(activation_dropout_(at::relu(fc1_(h))));      // [B, T, ffn_dim] -> [B, T, D]
  h = residual + dropout_(h);
  return {normalize_before_ ? h : final_layer_norm_(h), weights};  // [B, T, D]
}

}  // namespace mixseq
