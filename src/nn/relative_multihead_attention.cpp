#include "mixseq/nn/relative_multihead_attention.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>

#include "mixseq/nn/hashed_dropout.h"
#include "mixseq/nn/relative_shift.h"
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

torch::Tensor RelativeMultiheadAttentionImpl::forward(const torch::Tensor& context, int64_t segment_length,
                                                      const torch::Tensor& r, const torch::Tensor& r_w_bias,
                                                      const torch::Tensor& r_r_bias, const torch::Tensor& blocked) {
  const int64_t B = context.size(0), K = context.size(1), T = segment_length;
  const int64_t H = options_.n_head, Dh = options_.d_head;
  MIXSEQ_CHECK(context.dim() == 3 && context.size(2) == options_.d_model && T >= 1 && T <= K,
               "RelativeMultiheadAttention: context must be [B, K, ", options_.d_model, "] with K >= T = ", T,
               ", got ", context.sizes());
  MIXSEQ_CHECK(r.dim() == 2 && r.size(0) == K, "RelativeMultiheadAttention: r must be [K = ", K, ", D], got ",
               r.sizes());
  const auto& weight = qkv_net_->weight;  // [3 H Dh, D]: the rows of q, then k, then v
  const double scale = 1.0 / std::sqrt(static_cast<double>(Dh));
  const auto q = at::linear(context.narrow(1, K - T, T), weight.narrow(0, 0, H * Dh)).view({B, T, H, Dh});
  const auto kv = at::linear(context, weight.narrow(0, H * Dh, 2 * H * Dh)).view({B, K, 2, H, Dh});
  const auto k = kv.select(2, 0).permute({2, 0, 3, 1});                   // [H, B, Dh, K]
  const auto v = kv.select(2, 1).permute({2, 0, 1, 3});                   // [H, B, K, Dh]
  const auto r_k = r_net_(r.to(weight.scalar_type())).view({K, H, Dh}).permute({1, 2, 0});  // [H, Dh, K]

  // 1/sqrt(Dh) scales the queries rather than the [T, K] scores: fewer multiplications.
  const auto q_u = ((q + r_w_bias) * scale).permute({2, 0, 1, 3});       // [H, B, T, Dh]
  const auto q_v = ((q + r_r_bias) * scale).permute({2, 0, 1, 3}).reshape({H, B * T, Dh});  // [H, B T, Dh]
  const auto content = at::matmul(q_u, k);                                // [H, B, T, K]  (a) + (c)
  const auto position = at::bmm(q_v, r_k).view({H, B, T, K});             // [H, B, T, K]  (b) + (d), per distance
  auto scores = add_relative_shift(content, position);                     // [H, B, T, K]
  if (scores.scalar_type() != at::kFloat && scores.scalar_type() != at::kDouble) scores = scores.to(at::kFloat);
  if (blocked.defined()) scores = scores.masked_fill(blocked, -std::numeric_limits<double>::infinity());
  auto probs = at::softmax(scores, -1);                                   // [H, B, T, K]
  probs = hashed_dropout(probs, options_.dropatt, is_training());
  const auto heads = at::matmul(probs.to(v.scalar_type()), v);            // [H, B, T, Dh]
  return o_net_(heads.permute({1, 2, 0, 3}).reshape({B, T, H * Dh}));     // [B, T, D]
}

}  // namespace mixseq
