#include "mixseq/nn/multihead_attention.h"

#include <cmath>

#include "mixseq/nn/xavier_linear.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

const MultiheadAttentionOptions& checked(const MultiheadAttentionOptions& options) {
  MIXSEQ_CHECK(options.embed_dim > 0 && options.num_heads > 0 && options.embed_dim % options.num_heads == 0,
               "MultiheadAttention: embed_dim (", options.embed_dim, ") must be a positive multiple of num_heads (",
               options.num_heads, ")");
  return options;
}

// fairseq scales the xavier bound of q, k and v by 1/sqrt(2): "empirically observed to
// converge better".
const double kQkvGain = 1.0 / std::sqrt(2.0);

}  // namespace

MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& options)
    : num_heads_(checked(options).num_heads),
      dropout_(options.dropout),
      q_proj_(register_module("q_proj", xavier_linear(options.embed_dim, options.embed_dim, true, kQkvGain))),
      k_proj_(register_module("k_proj", xavier_linear(options.embed_dim, options.embed_dim, true, kQkvGain))),
      v_proj_(register_module("v_proj", xavier_linear(options.embed_dim, options.embed_dim, true, kQkvGain))),
      out_proj_(register_module("out_proj", xavier_linear(options.embed_dim, options.embed_dim))),
      scores_(register_module("scores", QuantizationPoint())),
      weights_(register_module("weights", QuantizationPoint())),
      context_(register_module("context", QuantizationPoint())) {}

torch::Tensor MultiheadAttentionImpl::split_heads(const torch::Tensor& x) const {
  return x.view({x.size(0), x.size(1), num_heads_, -1}).transpose(1, 2);  // [B, H, T, Dh]
}

KeyValueCache MultiheadAttentionImpl::project_key_value(const torch::Tensor& x) {
  return {split_heads(k_proj_(x)), split_heads(v_proj_(x))};  // each [B, H, S, Dh]
}

std::tuple<torch::Tensor, torch::Tensor> MultiheadAttentionImpl::forward(const torch::Tensor& query,
                                                                         const KeyValueCache& key_value,
                                                                         const torch::Tensor& key_padding_mask,
                                                                         bool causal, bool need_weights,
                                                                         AttentionKernel kernel) {
  const auto q = split_heads(q_proj_(query));  // [B, H, T, Dh]
  const double dropout_p = is_training() ? dropout_ : 0.0;
  torch::Tensor y, weights;                    // [B, H, T, Dh], [B, H, T, S]
  if (need_weights || scores_->active() || weights_->active() || context_->active()) {
    std::tie(y, weights) = plain_attention(q, key_value.keys, key_value.values, key_padding_mask, causal, dropout_p,
                                           AttentionPoints{scores_.get(), weights_.get(), context_.get()});
  } else {
    y = scaled_dot_product_attention(q, key_value.keys, key_value.values, key_padding_mask, causal, dropout_p, kernel);
  }
  const auto merged = y.transpose(1, 2).reshape({query.size(0), query.size(1), -1});  // [B, T, D]
  return {out_proj_(merged), weights};                                                // [B, T, D]
}

}  // namespace mixseq
