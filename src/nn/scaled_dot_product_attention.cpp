#include "mixseq/nn/scaled_dot_product_attention.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>

#include "mixseq/nn/batched_matmul.h"
#include "mixseq/nn/float_attention_core.h"
#include "mixseq/nn/hashed_dropout.h"
#include "mixseq/nn/one_row_matmul.h"
#include "util/torch_compat.h"

namespace mixseq {
namespace {

// [B or 1, 1, T or 1, S] bool, true where a query may not attend; undefined when nothing is masked.
torch::Tensor blocked_mask(const torch::Tensor& key_padding_mask, bool causal, int64_t t, int64_t s,
                           const torch::Device& device) {
  torch::Tensor blocked;
  if (key_padding_mask.defined()) blocked = key_padding_mask.to(device).unsqueeze(1).unsqueeze(2);  // [B, 1, 1, S]
  if (causal && t > 1) {
    const auto options = at::TensorOptions().dtype(at::kBool).device(device);
    const auto future = at::ones({t, s}, options).triu(s - t + 1);  // [T, S], true above the shifted diagonal
    blocked = blocked.defined() ? blocked.logical_or(future) : future.view({1, 1, t, s});
  }
  return blocked;
}

// q K^T with one query: one_row_matmul over the keys' transpose, which reads each key [Dh]
// contiguously as cached ([B, H, S, Dh]); see nn/one_row_matmul.h for why. Several queries:
// batched_matmul reads the heads where the projections left them ([B, T, H, Dh]).
torch::Tensor query_key_products(const torch::Tensor& q, const torch::Tensor& k) {  // -> [B, H, T, S]
  if (uses_broadcast_row_product(q)) return one_row_matmul(q, k.transpose(-2, -1));  // [B, H, 1, S]
  return batched_matmul(q, k.transpose(-2, -1));
}

// weights V -> [B, H, T, Dh], stored as [B, T, H, Dh] where batched_matmul runs, so that
// merging the heads back into [B, T, D] copies nothing.
torch::Tensor weighted_values(const torch::Tensor& weights, const torch::Tensor& v) {
  if (uses_broadcast_row_product(weights)) return one_row_matmul(weights, v);
  return batched_matmul(weights, v, {0, 2, 1, 3});
}

}  // namespace

std::tuple<torch::Tensor, torch::Tensor> plain_attention(const torch::Tensor& q, const torch::Tensor& k,
                                                         const torch::Tensor& v, const torch::Tensor& key_padding_mask,
                                                         bool causal, double dropout_p,
                                                         const AttentionPoints& points) {
  const double scaling = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  auto scores = query_key_products(q * scaling, k);  // [B, H, T, S]
  if (scores.scalar_type() == at::kHalf || scores.scalar_type() == at::kBFloat16) scores = scores.to(at::kFloat);
  scores = through(points.scores, scores);
  const auto blocked = blocked_mask(key_padding_mask, causal, q.size(2), k.size(2), q.device());
  if (blocked.defined()) scores = scores.masked_fill(blocked, -std::numeric_limits<double>::infinity());
  const auto weights = through(points.weights, at::softmax(scores, -1));      // [B, H, T, S]
  const auto dropped = hashed_dropout(weights, dropout_p, /*training=*/dropout_p > 0.0);
  return {through(points.context, weighted_values(dropped.to(v.scalar_type()), v)), weights};  // [B, H, T, Dh], [B, H, T, S]
}

torch::Tensor scaled_dot_product_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                           const torch::Tensor& key_padding_mask, bool causal, double dropout_p,
                                           AttentionKernel kernel) {
  if (kernel == AttentionKernel::kAuto && compat::has_fused_attention()) {
    const auto blocked = blocked_mask(key_padding_mask, causal, q.size(2), k.size(2), q.device());
    return compat::fused_attention(q, k, v, blocked.defined() ? blocked.logical_not() : blocked, dropout_p);
  }
  if (kernel == AttentionKernel::kAuto && takes_float_attention_core(q, k, v)) {
    return float_attention_core(q, k, v, blocked_mask(key_padding_mask, causal, q.size(2), k.size(2), q.device()),
                                dropout_p);
  }
  return std::get<0>(plain_attention(q, k, v, key_padding_mask, causal, dropout_p));  // [B, H, T, Dh]
}

}  // namespace mixseq
