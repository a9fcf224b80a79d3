#include "mixseq/nn/multihead_attention.h"

#include <cmath>

#include "mixseq/nn/single_query_attention.h"
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
  return {split_heads(k_proj_(x)), split_heads(v_proj_(x)), /*rows=*/torch::Tensor(), CodeGrid{}, CodeGrid{}};  // [B, H, S, Dh]
}

KeyValueCache MultiheadAttentionImpl::project_key_value_for_steps(const torch::Tensor& x) {
  if (!k_proj_->runs_int8() || !v_proj_->runs_int8() || k_proj_->observed() || v_proj_->observed())
    return project_key_value(x);
  const auto [keys, key_grid] = k_proj_->forward_codes(x);        // [B, S, D] uint8
  const auto [values, value_grid] = v_proj_->forward_codes(x);    // [B, S, D] uint8
  return {split_heads(keys), split_heads(values), /*rows=*/torch::Tensor(), key_grid, value_grid};
}

bool MultiheadAttentionImpl::takes_single_query_kernel(const torch::Tensor& q, const torch::Tensor& keys,
                                                       const torch::Tensor& values) const {
  return takes_single_query_attention(q, keys, values) && (!is_training() || dropout_ == 0.0) && !scores_->active() &&
         !weights_->active() && !context_->active();
}

torch::Tensor MultiheadAttentionImpl::merged_output(const torch::Tensor& query, const torch::Tensor& y) {
  return out_proj_(y.transpose(1, 2).reshape({query.size(0), query.size(1), -1}));  // [B, T, D]
}

std::tuple<torch::Tensor, torch::Tensor> MultiheadAttentionImpl::forward(const torch::Tensor& query,
                                                                         const KeyValueCache& key_value,
                                                                         const torch::Tensor& key_padding_mask,
                                                                         bool causal, bool need_weights,
                                                                         AttentionKernel kernel) {
  return attend(query, split_heads(q_proj_(query)), key_value, key_padding_mask, causal, need_weights, kernel);
}

std::tuple<torch::Tensor, torch::Tensor> MultiheadAttentionImpl::attend(const torch::Tensor& query,
                                                                        const torch::Tensor& q,
                                                                        const KeyValueCache& key_value,
                                                                        const torch::Tensor& key_padding_mask,
                                                                        bool causal, bool need_weights,
                                                                        AttentionKernel kernel) {
  const double dropout_p = is_training() ? dropout_ : 0.0;
  torch::Tensor y, weights;  // [B, H, T, Dh], [B, H, T, S]
  if (takes_single_query_kernel(q, key_value.keys, key_value.values)) {  // one query sees every key: causal or not
    const int64_t length = key_value.keys.size(2);
    const auto rows = key_value.rows.defined() ? key_value.rows.unsqueeze(1).expand({q.size(0), length}) : key_value.rows;
    std::tie(y, weights) = single_query_attention(q, key_value.keys, key_value.values, rows, length, key_padding_mask,
                                                  need_weights, key_value.key_grid, key_value.value_grid);
    return {merged_output(query, y), weights};
  }
  const auto full = key_value.materialized().in_float();  // [B, H, S, Dh]
  if (need_weights || scores_->active() || weights_->active() || context_->active()) {
    std::tie(y, weights) = plain_attention(q, full.keys, full.values, key_padding_mask, causal, dropout_p,
                                           AttentionPoints{scores_.get(), weights_.get(), context_.get()});
  } else {
    y = scaled_dot_product_attention(q, full.keys, full.values, key_padding_mask, causal, dropout_p, kernel);
  }
  return {merged_output(query, y), weights};  // [B, T, D], [B, H, T, S]
}

torch::Tensor MultiheadAttentionImpl::forward_incremental(const torch::Tensor& query,
                                                          const IncrementalKeyValueCache& cache) {
  const auto q = split_heads(q_proj_(query));  // [B, H, T, Dh]
  if (!takes_single_query_kernel(q, cache.stored_keys(), cache.stored_values())) {
    return std::get<0>(attend(query, q, cache.materialized(), /*key_padding_mask=*/torch::Tensor(), /*causal=*/true,
                              /*need_weights=*/false, AttentionKernel::kAuto));
  }
  const auto y = std::get<0>(single_query_attention(q, cache.stored_keys(), cache.stored_values(), cache.rows(),
                                                    cache.length(), /*key_padding_mask=*/torch::Tensor(),
                                                    /*need_weights=*/false, cache.key_grid(),
                                                    cache.value_grid()));  // [B, H, 1, Dh]
  return merged_output(query, y);
}

}  // namespace mixseq
