// RelativeMultiheadAttention: Transformer-XL's multi-head attention with relative positional
// encodings and learned global biases (Dai et al. 2019, §3.3, "attention type 0"; the
// reference's RelPartialLearnableMultiHeadAttn in kimiyoung/transformer-xl,
// pytorch/mem_transformer.py). For query i and key j at distance d = i - j:
//
//   score(i, j) = (q_i + u) . k_j  +  (q_i + v) . W_r R_d         (terms (a)+(c), (b)+(d))
//
// scaled by 1/sqrt(Dh), where R_d is the sinusoid of distance d (nn/relative_positional_embedding.h),
// W_r is r_net, and u, v are the biases r_w_bias and r_r_bias that the model owns and passes to
// every layer (the reference's untie_r=False). The second term is computed for every distance
// and then aligned with the keys by nn/relative_shift.h; nn/relative_attention_core.h does the
// products, the mask, the softmax and dropatt.
//
// The attention reads a context [memory; segment] of K = M + T positions: keys and values come
// from all of it, queries from its last T positions (the reference projects queries for all K
// and drops M of them; this projects only the T it keeps, one product for q, one for k and v, from
// the same qkv_net weight). Keys and values are projected apart (project_key_value), so that a
// caller evaluating segment after segment can keep those of the memory instead of projecting
// them again. The residual connection, the LayerNorm (post-norm or, with pre_lnorm,
// on the whole context including the memory) and the output dropout belong to the layer
// (nn/transformer_xl_layer.h).
//
// Parameters, as the reference names them: qkv_net [3 H Dh, D] (rows: q, k, v), o_net [D, H Dh],
// r_net [H Dh, D]; no biases. Mixed precision: the scores are taken to fp32 before the softmax.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

#include "mixseq/nn/cpu_float_linear.h"  // TransposedWeight
#include "mixseq/nn/scaled_dot_product_attention.h"  // AttentionKernel

namespace mixseq {

struct RelativeMultiheadAttentionOptions {
  int64_t d_model = 0;   // D, the width of the context and of the output
  int64_t n_head = 1;    // H
  int64_t d_head = 0;    // Dh, the width of each head (H * Dh need not equal D)
  double dropatt = 0.0;  // dropout on the attention probabilities in training; 0 disables
  AttentionKernel kernel = AttentionKernel::kAuto;  // kPlain: never the fused CPU kernel of
                                                    // nn/relative_attention_core.h (to compare)
};

class RelativeMultiheadAttentionImpl : public torch::nn::Module {
 public:
  explicit RelativeMultiheadAttentionImpl(const RelativeMultiheadAttentionOptions& options);

  // context [B, K, D] -> its keys and values [B, K, 2 H Dh] (each row: H Dh of k, then H Dh of v).
  torch::Tensor project_key_value(const torch::Tensor& context);

  // segment [B, T, D]: the queries' inputs; key_value [B, K, 2 H Dh]: project_key_value of
  // [memory; segment] (its last T rows are the segment's; a caller may keep the memory's rows
  // from an earlier call, see key_value_version); r [K, D]: relative positional embeddings of
  // the distances K-1 .. 0; r_w_bias, r_r_bias [H, Dh]: u and v; blocked [T, K] bool, true where
  // query i must not see key j (at least the keys after it, see nn/relative_shift.h), or
  // undefined when none is. -> [B, T, D], o_net's output (before the layer's dropout and residual).
  torch::Tensor forward(const torch::Tensor& segment, const torch::Tensor& key_value, const torch::Tensor& r,
                        const torch::Tensor& r_w_bias, const torch::Tensor& r_r_bias, const torch::Tensor& blocked);

  // Changes whenever the weights of project_key_value change (an optimizer step, a checkpoint
  // loaded): keys and values kept from a call with the same version may be reused.
  int64_t key_value_version() const { return qkv_net_->weight._version(); }

  const RelativeMultiheadAttentionOptions& options() const { return options_; }

 private:
  RelativeMultiheadAttentionOptions options_;
  torch::nn::Linear qkv_net_;
  torch::nn::Linear o_net_;
  torch::nn::Linear r_net_;
  // Evaluation's [K, N] copies of the query rows (scaled), the key and value rows, o_net and r_net
  // (nn/cpu_float_linear.h).
  TransposedWeight query_columns_, key_value_columns_, o_columns_, r_columns_;
};
TORCH_MODULE(RelativeMultiheadAttention);

}  // namespace mixseq
