#include "mixseq/nn/bahdanau_attention.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>

#include "mixseq/nn/additive_attention_scores.h"
#include "mixseq/nn/one_row_matmul.h"

namespace mixseq {
namespace {

QuantizableLinear make_projection(int64_t in, int64_t out, double init_range) {
  QuantizableLinear linear(torch::nn::LinearOptions(in, out).bias(false));
  torch::NoGradGuard no_grad;
  linear->weight.uniform_(-init_range, init_range);
  return linear;
}

}  // namespace

BahdanauAttentionImpl::BahdanauAttentionImpl(const BahdanauAttentionOptions& options)
    : query_proj_(register_module("query_proj",
                                  make_projection(options.query_size, options.num_units, options.init_range))),
      key_proj_(register_module("key_proj", make_projection(options.key_size, options.num_units, options.init_range))),
      score_v_(register_parameter("score_v", at::empty({options.num_units}).uniform_(-options.init_range,
                                                                                      options.init_range))),
      // g starts at 1/sqrt(D) as in TensorFlow and NVIDIA's GNMT: ||v̂|| = g and ||tanh(.)|| <= sqrt(D),
      // so every initial score lies in [-1, 1] whatever D is (Cauchy-Schwarz).
      score_g_(register_parameter("score_g", at::full({1}, 1.0 / std::sqrt(static_cast<double>(options.num_units))))),
      score_bias_(register_parameter("score_bias", at::zeros({options.num_units}))),
      normalized_v_(register_module("normalized_v", QuantizationPoint())),
      score_sum_(register_module("score_sum", QuantizationPoint())),
      score_tanh_(register_module("score_tanh", QuantizationPoint())),
      scores_(register_module("scores", QuantizationPoint())),
      weights_(register_module("weights", QuantizationPoint())),
      context_(register_module("context", QuantizationPoint())) {}

torch::Tensor BahdanauAttentionImpl::project_keys(const torch::Tensor& keys) {
  return key_proj_(keys);  // [B, S, D]
}

std::tuple<torch::Tensor, torch::Tensor> BahdanauAttentionImpl::forward(const torch::Tensor& query,
                                                                        const torch::Tensor& keys,
                                                                        const torch::Tensor& projected_keys,
                                                                        const torch::Tensor& pad_mask) {
  const auto projected_query = query_proj_(query);                        // [B, T, D]
  const auto v_hat = normalized_v_(score_g_ * score_v_ / score_v_.norm());  // [D]
  torch::Tensor scores;                                                     // [B, T, S]
  if (score_sum_->active() || score_tanh_->active() || scores_->active()) {
    // Op by op, so that the points see every boundary. The fp32 parameters are cast to the
    // projections' dtype: added as they are, they would promote the sum to fp32 under autocast.
    const auto dtype = projected_query.scalar_type();
    const auto hidden = score_tanh_(at::tanh(score_sum_(projected_query.unsqueeze(2) + projected_keys.unsqueeze(1) +
                                                        score_bias_.to(dtype))));  // [B, T, S, D]
    scores = scores_(at::matmul(hidden, v_hat.to(dtype))).to(at::kFloat);
  } else {
    // b is added to the [B, T, D] queries rather than to the [B, T, S, D] sums, in the
    // projection's dtype (autocast: an fp32 sum would double the unfused path's on a GPU).
    scores = additive_attention_scores(projected_query + score_bias_.to(projected_query.scalar_type()),
                                       projected_keys, v_hat);
  }
  scores = scores.masked_fill(pad_mask.unsqueeze(1), -std::numeric_limits<double>::infinity());
  const auto weights = weights_(at::softmax(scores, /*dim=*/-1));
  const auto context = context_(one_row_matmul(weights.to(keys.scalar_type()), keys));  // [B, T, key_size]
  return {context, weights};
}

}  // namespace mixseq
