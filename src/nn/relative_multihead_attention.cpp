#include "mixseq/nn/relative_multihead_attention.h"

#include <ATen/ATen.h>

#include <cmath>

#include "mixseq/nn/linear_product.h"
#include "mixseq/nn/relative_attention_core.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

const RelativeMultiheadAttentionOptions& checked(const RelativeMultiheadAttentionOptions& options) {
  MIXSEQ_CHECK(options.d_model > 0 && options.n_head > 0 && options.d_head > 0,
               "RelativeMultiheadAttention: d_model (", options.d_model, "), n_head (", options.n_head,
               ") and d_head (", options.d_head, ") must be positive");
  MIXSEQ_CHECK(options.dropatt >= 0.0 && options.dropatt < 1.0,
               "RelativeMultiheadAttention: dropatt must be in [0, 1), got ", options.dropatt);
  return options;
}

torch::nn::Linear linear(int64_t in, int64_t out) { return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false)); }

}  // namespace

RelativeMultiheadAttentionImpl::RelativeMultiheadAttentionImpl(const RelativeMultiheadAttentionOptions& options)
    : options_(checked(options)),
      qkv_net_(register_module("qkv_net", linear(options.d_model, 3 * options.n_head * options.d_head))),
      o_net_(register_module("o_net", linear(options.n_head * options.d_head, options.d_model))),
      r_net_(register_module("r_net", linear(options.d_model, options.n_head * options.d_head))) {}

torch::Tensor RelativeMultiheadAttentionImpl::project_key_value(const torch::Tensor& context) {
  const int64_t width = options_.n_head * options_.d_head;
  return linear_product(context, qkv_net_->weight.narrow(0, width, 2 * width), {}, key_value_columns_);  // [B, K, 2 H Dh]
}

torch::Tensor RelativeMultiheadAttentionImpl::forward(const torch::Tensor& segment, const torch::Tensor& key_value,
                                                      const torch::Tensor& r, const torch::Tensor& r_w_bias,
                                                      const torch::Tensor& r_r_bias, const torch::Tensor& blocked) {
  const int64_t H = options_.n_head, Dh = options_.d_head;
  MIXSEQ_CHECK(segment.dim() == 3 && key_value.dim() == 3 && segment.size(0) == key_value.size(0) &&
                   segment.size(2) == options_.d_model && key_value.size(2) == 2 * H * Dh &&
                   segment.size(1) >= 1 && segment.size(1) <= key_value.size(1),
               "RelativeMultiheadAttention: segment must be [B, T, ", options_.d_model, "] and key_value [B, K, ",
               2 * H * Dh, "] with 1 <= T <= K, got ", segment.sizes(), " and ", key_value.sizes());
  const int64_t B = key_value.size(0), K = key_value.size(1), T = segment.size(1);
  MIXSEQ_CHECK(r.dim() == 2 && r.size(0) == K, "RelativeMultiheadAttention: r must be [K = ", K, ", D], got ",
               r.sizes());
  const auto& weight = qkv_net_->weight;  // [3 H Dh, D]: the rows of q, then k, then v
  // 1/sqrt(Dh) scales the query rows of the weight rather than the [T, K] scores (fewer products).
  const double scale = 1.0 / std::sqrt(static_cast<double>(Dh));
  const auto q = linear_product(segment, weight.narrow(0, 0, H * Dh), {}, query_columns_, scale)
                     .view({B, T, H, Dh});                                                        // [B, T, H, Dh]
  const auto r_k = linear_product(r.to(weight.scalar_type()), r_net_->weight, {}, r_columns_).view({K, H, Dh});
  const auto heads = relative_attention_core(q + r_w_bias * scale, q + r_r_bias * scale, key_value, r_k, blocked,
                                             options_.dropatt, is_training(), options_.kernel);  // [B, T, H, Dh]
  return linear_product(heads.reshape({B * T, H * Dh}), o_net_->weight, {}, o_columns_).view({B, T, -1});  // [B, T, D]
}

}  // namespace mixseq
