// TransformerXlModel: the Transformer-XL language model of Dai et al. 2019 as the paper's code
// builds it (MemTransformerLM with attn_type 0 in kimiyoung/transformer-xl,
// pytorch/mem_transformer.py), behind the LanguageModelImpl interface (models/language_model.h).
//
//   embedding  adaptive input (nn/adaptive_embedding.h): ids -> [B, T, D], scaled by sqrt(D), dropout
//   positions  sinusoids of the relative distances K-1 .. 0 (clamped to clamp_len), dropout; one
//              [K, D] tensor shared by every layer (nn/relative_positional_embedding.h)
//   layers     n_layer x TransformerXlLayer (nn/transformer_xl_layer.h): relative attention with the
//              learned biases u = r_w_bias and v = r_r_bias, [H, Dh], shared by all layers (the
//              reference's untie_r=False), over [memory; segment], then the feed-forward network
//   output     dropout, then the projected adaptive softmax (nn/projected_adaptive_log_softmax.h),
//              its output vectors tied to the embedding's with tie_weight, its tail projections
//              with tie_projs
//
// Memory (Dai et al. 2019, §3.2; the reference's _update_mems with ext_len 0): the input of every
// layer at the last mem_len positions of [memory; segment], detached. Layer i's context is its
// memory followed by its input; the returned memory is that context's last mem_len positions.
// In evaluation (eval() and no gradients) the returned memory also carries each layer's projected
// keys and values of those positions (LmMemory::reusable), and the next segment projects only its
// own positions: at one token a step, generation would otherwise project all M of them again.
//
// Mask: query i (position M + i) sees the keys up to its own position; with same_length also
// none more than mem_len positions back, so every query sees the same number of keys (the
// reference's mask, including its shape when the memory is shorter than mem_len).
//
// Initialisation as the reference's train.py weights_init: weights of linear layers, embeddings,
// output vectors, cluster_weight, r_w_bias and r_r_bias from N(0, init_std) (or
// U(-init_range, init_range) with init uniform); projections N(0, proj_init_std); LayerNorm
// weights N(1, init_std); biases 0.
//
// Dropout is nn/hashed_dropout.h's (masks drawn in parallel), with LibTorch's default CPU
// generator's seed.
//
// Mixed precision: run under autocast with fp32 parameters; attention softmaxes and the output
// log-probabilities are fp32. Not thread-safe; use one model per thread.
#pragma once

#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <utility>

#include "mixseq/models/language_model.h"
#include "mixseq/models/model_config.h"
#include "mixseq/nn/adaptive_embedding.h"
#include "mixseq/nn/projected_adaptive_log_softmax.h"

namespace mixseq {

class TransformerXlModelImpl : public LanguageModelImpl {
 public:
  // Throws mixseq::Error for invalid config values or vocab_size < 2. Without `output_layer` the
  // model is an encoder only (a sentence classifier's): no softmax (its output vectors, biases and
  // projections; tied ones stay in the embedding), forward() and log_probs() throw, encode() works,
  // and a language model's checkpoint loads into it.
  TransformerXlModelImpl(const TransformerXlConfig& config, int64_t vocab_size, bool output_layer = true);

  LmOutput forward(const torch::Tensor& tokens, const torch::Tensor& targets, const LmMemory& memory) override;
  LmLogProbs log_probs(const torch::Tensor& tokens, const LmMemory& memory) override;
  int64_t vocab_size() const override { return vocab_size_; }
  // The last layer's output [B, T, D], before the output dropout.
  std::pair<torch::Tensor, LmMemory> encode(const torch::Tensor& tokens, const LmMemory& memory) override;
  int64_t state_size() const override { return d_model_; }
  // Each layer from the last; the first with the embedding and the shared biases u and v.
  std::vector<std::vector<torch::Tensor>> layer_groups() const override;
  // mem_len >= 0; clamp_len -1, 0 (no clamping) or positive; same_length needs mem_len > 0.
  void set_context(const LmContext& context) override;
  LmContext context() const override { return context_; }

  // The input and output layers (holders sharing the model's modules), e.g. to check their tying.
  AdaptiveEmbedding embedding() const { return embedding_; }
  ProjectedAdaptiveLogSoftmax softmax() const { return softmax_; }
  int64_t n_layer() const { return static_cast<int64_t>(layers_->size()); }

 private:
  // tokens [B, T] -> the last layer's output after dropout [B, T, D], and the next memory; throws
  // without an output layer.
  std::pair<torch::Tensor, LmMemory> hidden_states(const torch::Tensor& tokens, const LmMemory& memory);
  // [T, K] bool, true where query i (position M + i) must not see key j; undefined when none is.
  torch::Tensor blocked_keys(int64_t segment_length, int64_t memory_length, const torch::Device& device) const;

  int64_t vocab_size_;
  int64_t d_model_;
  double dropout_;  // on the embeddings, the positional embeddings and the last layer's output
  LmContext context_;
  AdaptiveEmbedding embedding_;
  torch::nn::ModuleList layers_;  // TransformerXlLayer
  torch::Tensor r_w_bias_;        // u [H, Dh]
  torch::Tensor r_r_bias_;        // v [H, Dh]
  ProjectedAdaptiveLogSoftmax softmax_{nullptr};  // null without an output layer
};
TORCH_MODULE(TransformerXlModel);

}  // namespace mixseq
