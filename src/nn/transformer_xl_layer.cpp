#include "mixseq/nn/transformer_xl_layer.h"

#include "mixseq/nn/hashed_dropout.h"
#include "mixseq/nn/linear_product.h"

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

torch::nn::LayerNorm layer_norm(int64_t d_model) { return torch::nn::LayerNorm(torch::nn::LayerNormOptions({d_model})); }

}  // namespace

TransformerXlLayerImpl::TransformerXlLayerImpl(const TransformerXlLayerOptions& options)
    : pre_lnorm_(options.pre_lnorm),
      dropout_(options.dropout),
      attn_(register_module("attn", RelativeMultiheadAttention(attention_options(options)))),
      attn_layer_norm_(register_module("attn_layer_norm", layer_norm(options.d_model))),
      fc1_(register_module("fc1", torch::nn::Linear(options.d_model, options.d_inner))),
      fc2_(register_module("fc2", torch::nn::Linear(options.d_inner, options.d_model))),
      ff_layer_norm_(register_module("ff_layer_norm", layer_norm(options.d_model))) {}

int64_t TransformerXlLayerImpl::key_value_version() const {
  const int64_t version = attn_->key_value_version();
  if (!pre_lnorm_) return version;
  return version + attn_layer_norm_->weight._version() + attn_layer_norm_->bias._version();
}

torch::Tensor TransformerXlLayerImpl::forward(const torch::Tensor& x, const torch::Tensor& context,
                                              const torch::Tensor& r, const torch::Tensor& r_w_bias,
                                              const torch::Tensor& r_r_bias, const torch::Tensor& blocked,
                                              const torch::Tensor& memory_key_value, torch::Tensor* key_value) {
  const bool training = is_training();
  torch::Tensor queries = x, keys_values;  // [B, T, D], [B, K, 2 H Dh]
  if (memory_key_value.defined()) {        // the memory's keys and values kept: project the segment only
    if (pre_lnorm_) queries = attn_layer_norm_(x);
    keys_values = at::cat({memory_key_value, attn_->project_key_value(queries).to(memory_key_value.scalar_type())}, 1);
  } else if (pre_lnorm_) {
    const auto normed = attn_layer_norm_(context);  // [B, K, D]
    queries = normed.narrow(1, normed.size(1) - x.size(1), x.size(1));
    keys_values = attn_->project_key_value(normed);
  } else {
    keys_values = attn_->project_key_value(context);
  }
  if (key_value != nullptr) *key_value = keys_values;
  const auto attended =
      hashed_dropout(attn_(queries, keys_values, r, r_w_bias, r_r_bias, blocked), dropout_, training);  // [B, T, D]
  const auto y = pre_lnorm_ ? x + attended : attn_layer_norm_(x + attended);     // [B, T, D]
  // The FFN on [B T, D] rows.
  const auto rows = (pre_lnorm_ ? ff_layer_norm_(y) : y).reshape({-1, y.size(2)});       // [B T, D]
  const auto inner = training && dropout_ > 0.0                                                // [B T, d_inner]
                         ? hashed_relu_dropout(linear_product(rows, fc1_->weight, fc1_->bias), dropout_, true)
                         : linear_relu_product(rows, fc1_->weight, fc1_->bias, fc1_columns_);
  const auto fed = hashed_dropout(linear_product(inner, fc2_->weight, fc2_->bias, fc2_columns_), dropout_, training)
                       .view(y.sizes());                                                  // [B, T, D]
  return pre_lnorm_ ? y + fed : ff_layer_norm_(y + fed);                                  // [B, T, D]
}

}  // namespace mixseq
