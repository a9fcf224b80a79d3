// BahdanauAttention: additive attention (Bahdanau et al. 2015, eq. 6 and appendix A.1.2) in
// its normalized form, as TensorFlow's BahdanauAttention(normalize=True) and NVIDIA's GNMT
// (seq2seq/models/attention.py) compute it:
//
//   score(q, k_s) = v̂ · tanh(W_q q + W_k k_s + b),   v̂ = g · v / ||v||
//   weights       = softmax over s of score, with padded source positions at -inf
//   context       = sum_s weights_s · k_s
//
// v̂ is v under weight normalization (Salimans & Kingma 2016): its length g is learned apart
// from its direction, so the scale of the scores does not drift with v.
//
// W_k k does not depend on the query, so project_keys() computes it once per batch and every
// query (a whole target sequence in training, one token per step in search) reuses it.
//
// Quantization points (nn/quantization_point.h), identity in float, for simulated quantization:
// "normalized_v" (v̂, the norm division's output), "score_sum" (W_q q + W_k k_s + b),
// "score_tanh", "scores" (the product with v̂, before the padding mask), "weights" (the
// softmax's output) and "context" (the weighted sum of the keys). While one of them is active
// the scores are computed op by op, [B, T, S, D] hidden layer included, so that the points see
// it; otherwise without it in memory (nn/additive_attention_scores.h).
//
// Dtypes: under autocast the projections come out in lower precision; the scores, the softmax
// and the weights are fp32.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <tuple>

#include "mixseq/nn/quantizable_linear.h"
#include "mixseq/nn/quantization_point.h"

namespace mixseq {

struct BahdanauAttentionOptions {
  int64_t query_size = 0;   // width of the queries
  int64_t key_size = 0;     // width of the keys; the context has this width
  int64_t num_units = 0;    // width D of the score's hidden layer (W_q q + W_k k)
  double init_range = 0.1;  // W_q, W_k and v uniform in [-init_range, init_range]; b = 0, g = 1/sqrt(D)
};

class BahdanauAttentionImpl : public torch::nn::Module {
 public:
  explicit BahdanauAttentionImpl(const BahdanauAttentionOptions& options);

  // keys [B, S, key_size] -> W_k keys [B, S, D], to pass to forward() with every query.
  torch::Tensor project_keys(const torch::Tensor& keys);

  // query [B, T, query_size], keys [B, S, key_size], projected_keys [B, S, D] from
  // project_keys(keys), pad_mask [B, S] bool (true at padding; every row needs one false)
  // -> context [B, T, key_size], weights [B, T, S] (exactly 0 at padding).
  std::tuple<torch::Tensor, torch::Tensor> forward(const torch::Tensor& query, const torch::Tensor& keys,
                                                   const torch::Tensor& projected_keys,
                                                   const torch::Tensor& pad_mask);

 private:
  QuantizableLinear query_proj_;  // W_q, no bias (b is added once, below)
  QuantizableLinear key_proj_;    // W_k, no bias
  torch::Tensor score_v_;         // v [D], the direction of v̂ (NVIDIA: linear_att)
  torch::Tensor score_g_;         // g [1], the length of v̂ (NVIDIA: normalize_scalar)
  torch::Tensor score_bias_;      // b [D] (NVIDIA: normalize_bias)
  QuantizationPoint normalized_v_;
  QuantizationPoint score_sum_;
  QuantizationPoint score_tanh_;
  QuantizationPoint scores_;
  QuantizationPoint weights_;
  QuantizationPoint context_;
};
TORCH_MODULE(BahdanauAttention);

}  // namespace mixseq
