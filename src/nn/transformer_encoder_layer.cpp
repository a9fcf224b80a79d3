#include "mixseq/nn/transformer_encoder_layer.h"

#include <ATen/ATen.h>

#include "mixseq/nn/xavier_linear.h"

namespace mixseq {

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(const TransformerLayerOptions& options)
    : normalize_before_(options.normalize_before),
      self_attn_(register_module("self_attn", MultiheadAttention(MultiheadAttentionOptions{
                                                  options.embed_dim, options.num_heads, options.attention_dropout}))),
      self_attn_layer_norm_(register_module("self_attn_layer_norm",
                                            torch::nn::LayerNorm(torch::nn::LayerNormOptions({options.embed_dim})))),
      fc1_(register_module("fc1", xavier_linear(options.embed_dim, options.ffn_dim))),
      fc2_(register_module("fc2", xavier_linear(options.ffn_dim, options.embed_dim))),
      final_layer_norm_(register_module("final_layer_norm",
                                        torch::nn::LayerNorm(torch::nn::LayerNormOptions({options.embed_dim})))),
      dropout_(register_module("dropout", torch::nn::Dropout(options.dropout))),
      activation_dropout_(register_module("activation_dropout", torch::nn::Dropout(options.activation_dropout))) {}

torch::Tensor TransformerEncoderLayerImpl::forward(const torch::Tensor& x, const torch::Tensor& pad_mask) {
  auto residual = x;                                              // [B, S, D]
  auto h = normalize_before_ ? self_attn_layer_norm_(x) : x;
  h = std::get<0>(self_attn_(h, self_attn_->project_key_value(h), pad_mask, /*causal=*/false));  // [B, S, D]
  h = residual + dropout_(h);
  if (!normalize_before_) h = self_attn_layer_norm_(h);

  residual = h;
  if (normalize_before_) h = final_layer_norm_(h);
  h = fc2_(activation_dropout_(at::relu(fc1_(h))));              // [B, S, ffn_dim] -> [B, S, D]
  h = residual + dropout_(h);
  return normalize_before_ ? h : final_layer_norm_(h);           // [B, S, D]
}

}  // namespace mixseq
