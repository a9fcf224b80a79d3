// Location-sensitive attention (Chorowski et al. 2015, §2.2; Tacotron 2, Shen et al. 2018, §2.2) as
// NVIDIA DeepLearningExamples' Tacotron 2 computes it (tacotron2/model.py, Attention and
// LocationLayer): for one decoder step,
//   f = location_dense(location_conv([previous weights; cumulative weights]))  [B, S, A]
//   e_s = v . tanh(query_layer(q) + memory_layer(h_s) + f_s)                   [B, S]
//   a = softmax(e masked to -inf past each source's length)                    [B, S]
//   context = sum_s a_s h_s                                                    [B, E]
// memory_layer(h) does not change between steps: process_memory computes it once per utterance.
// Dimension alphabet: B batch, S source (text) positions, E memory width, Q query width, A attention
// width, K location filters.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include <cstdint>
#include <utility>

namespace mixseq {

struct LocationSensitiveAttentionOptions {
  int64_t query_dim = 1024;       // Q: the attention LSTM's width
  int64_t memory_dim = 512;       // E: the encoder output's width
  int64_t attention_dim = 128;    // A: width of the energies' hidden layer
  int64_t location_filters = 32;  // K: filters of the location convolution
  int64_t location_kernel = 31;   // its kernel (odd: the weights keep their length)
};

class LocationSensitiveAttentionImpl : public torch::nn::Module {
 public:
  explicit LocationSensitiveAttentionImpl(const LocationSensitiveAttentionOptions& options);

  // memory_layer(memory): [B, S, E] -> [B, S, A]; once per utterance.
  torch::Tensor process_memory(const torch::Tensor& memory);

  // Unnormalised energies e [B, S] for query [B, Q], processed memory [B, S, A] and the previous and
  // cumulative weights stacked as [B, 2, S].
  torch::Tensor energies(const torch::Tensor& query, const torch::Tensor& processed_memory,
                         const torch::Tensor& weights_cat);

  // (context [B, E], weights [B, S]); `pad_mask` [B, S] bool is true past each source's length.
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& query, const torch::Tensor& memory,
                                                  const torch::Tensor& processed_memory,
                                                  const torch::Tensor& weights_cat, const torch::Tensor& pad_mask);

  torch::nn::Linear query_layer{nullptr};    // Q -> A, no bias, gain tanh
  torch::nn::Linear memory_layer{nullptr};   // E -> A, no bias, gain tanh
  torch::nn::Linear v{nullptr};              // A -> 1, no bias
  torch::nn::Conv1d location_conv{nullptr};  // 2 -> K channels, no bias
  torch::nn::Linear location_dense{nullptr}; // K -> A, no bias, gain tanh
};
TORCH_MODULE(LocationSensitiveAttention);

}  // namespace mixseq
