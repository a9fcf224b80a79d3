// MultiheadAttention: Vaswani et al. 2017, §3.2.2, as fairseq's MultiheadAttention builds it:
// separate q, k and v projections (each D -> D with bias), H heads of Dh = D / H, scaled
// dot-product attention per head (nn/scaled_dot_product_attention.h), out_proj D -> D.
// Weights start xavier_uniform (gain 1/sqrt(2) for q, k, v as in fairseq), biases at 0.
//
// Keys and values are projected apart from the attention itself, so a decoder can project the
// encoder output once per batch (a KeyValueCache) and keep the keys and values of earlier target
// positions in an IncrementalKeyValueCache instead of recomputing them at every step. A step's
// single query (fp32, CPU, in evaluation) goes to nn/single_query_attention.h.
//
// Quantization points (nn/quantization_point.h) "scores", "weights" and "context" simulate
// quantized attention products and softmax (nn/scaled_dot_product_attention.h's AttentionPoints);
// while one is quantized or observed, the plain kernel runs.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <tuple>

#include "mixseq/nn/incremental_key_value_cache.h"
#include "mixseq/nn/key_value_cache.h"
#include "mixseq/nn/quantizable_linear.h"
#include "mixseq/nn/quantization_point.h"
#include "mixseq/nn/scaled_dot_product_attention.h"

namespace mixseq {

struct MultiheadAttentionOptions {
  int64_t embed_dim = 0;  // D, the width of queries, keys, values and output
  int64_t num_heads = 1;  // H; D must be a multiple of H
  double dropout = 0.0;   // on the attention weights in training; 0 disables
};

class MultiheadAttentionImpl : public torch::nn::Module {
 public:
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options);

  // x [B, S, D] -> keys and values [B, H, S, Dh].
  KeyValueCache project_key_value(const torch::Tensor& x);
  // The same for a decoder's steps: where k_proj and v_proj run in int8, the keys and values
  // stay uint8 codes (nn/key_value_cache.h), which every attention here reads.
  KeyValueCache project_key_value_for_steps(const torch::Tensor& x);

  // query [B, T, D] attends over key_value (from project_key_value); key_padding_mask [B, S]
  // bool (true at padding) or undefined; causal as in scaled_dot_product_attention.h.
  // -> output [B, T, D], and with need_weights the weights [B, H, T, S] (at least fp32; this
  // forces the plain kernel), else undefined.
  std::tuple<torch::Tensor, torch::Tensor> forward(const torch::Tensor& query, const KeyValueCache& key_value,
                                                   const torch::Tensor& key_padding_mask, bool causal,
                                                   bool need_weights = false,
                                                   AttentionKernel kernel = AttentionKernel::kAuto);

  // A decoder's self-attention: query [B, T, D] holds the last T of cache's positions and
  // attends causally over them -> [B, T, D].
  torch::Tensor forward_incremental(const torch::Tensor& query, const IncrementalKeyValueCache& cache);

 private:
  torch::Tensor split_heads(const torch::Tensor& x) const;  // [B, T, D] -> [B, H, T, Dh]
  bool takes_single_query_kernel(const torch::Tensor& q, const torch::Tensor& keys, const torch::Tensor& values) const;
  torch::Tensor merged_output(const torch::Tensor& query, const torch::Tensor& y);  // y [B, H, T, Dh] -> [B, T, D]
  // forward's attention after the query projection q [B, H, T, Dh].
  std::tuple<torch::Tensor, torch::Tensor> attend(const torch::Tensor& query, const torch::Tensor& q,
                                                  const KeyValueCache& key_value, const torch::Tensor& key_padding_mask,
                                                  bool causal, bool need_weights, AttentionKernel kernel);

  int64_t num_heads_;
  double dropout_;
  QuantizableLinear q_proj_;
  QuantizableLinear k_proj_;
  QuantizableLinear v_proj_;
  QuantizableLinear out_proj_;
  QuantizationPoint scores_;
  QuantizationPoint weights_;
  QuantizationPoint context_;
};
TORCH_MODULE(MultiheadAttention);

}  // namespace mixseq
