// LstmLmModel: an LSTM language model as pytorch/examples' word_language_model builds it
// (model.py RNNModel with rnn_type LSTM; Zaremba et al. 2014), behind the LanguageModelImpl interface
// (models/language_model.h), with two regularisers of AWD-LSTM (Merity et al. 2018, "Regularizing
// and Optimizing LSTM Language Models") as options:
//
//   embedding  ids -> word vectors [B, T, E], dropout (dropout_embed)
//   layers     num_layers single-layer LSTMs (torch::nn::LSTM, batch first), E -> H, then H -> H,
//              dropout between them (dropout_hidden); with weight_drop, each layer's
//              hidden-to-hidden matrix W_hh is DropConnected (Wan et al. 2013) once per call:
//              one mask for every step of the segment and every row of the batch, as AWD-LSTM's
//              WeightDrop
//   output     dropout (dropout_output), then scores over the vocabulary x W_outᵀ + b_out [B, T, V]
//              and their log-softmax in fp32. With tie_weights W_out is the embedding matrix
//              itself (Press & Wolf 2017; Inan et al. 2017): one tensor, one gradient; when H != E
//              a projection H -> E without bias comes first (Press & Wolf's P), so that the layers
//              need not be E wide
//
// With every dropout at word_language_model's 0.2, weight_drop 0 and tie_weights false, the
// model, its parameters and their initialisation are the reference's: word vectors and output
// vectors U(-init_range, init_range), output bias 0, LSTM weights and biases PyTorch's default
// U(-1/sqrt(H), 1/sqrt(H)) (two bias vectors per gate). Parameter names: embedding.weight,
// layers.<i>.{weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0}, projection.weight (tied, H != E),
// output_weight (untied), output_bias.
//
// The memory (LmMemory::layers) is the LSTM state after the segment's last token, 2 entries per
// layer in layer order, h then c: [h_0, c_0, h_1, c_1, ...], each [B, 1, H] in the weights' dtype
// (fp32 under autocast) and detached, so that truncated backpropagation through time stops at
// the segment boundary while the state carries on (the reference's repackage_hidden). An empty
// memory is the zero state. Nothing is kept in LmMemory::reusable.
//
// Context: an LSTM's state summarises the whole past, so there is no window to size:
// set_context() accepts any valid LmContext (mem_len >= 0, clamp_len >= -1) and keeps it for
// context(), but mem_len, clamp_len and same_length change nothing; lm-eval's --mem-len and
// generate's --mem-len are accepted and have no effect.
//
// Speed: on the CPU each layer runs nn/lstm_recurrence.h (one product for the inputs of all
// steps, the weights' gradients in one product each after the recurrence); elsewhere, or with
// weights that it does not take, LibTorch's fused LSTM with the same (dropped) weights.
//
// Mixed precision: run under autocast with fp32 parameters; the matrix products run in the
// autocast dtype, the cell arithmetic, the state and the log-probabilities in fp32. Dropout is
// nn/hashed_dropout.h's, seeded from LibTorch's default CPU generator. Not thread-safe; use one
// model per thread.
#pragma once

#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "mixseq/models/language_model.h"
#include "mixseq/models/model_config.h"
#include "mixseq/nn/cpu_float_linear.h"
#include "mixseq/nn/lstm_recurrence.h"

namespace mixseq {

class LstmLmModelImpl : public LanguageModelImpl {
 public:
  // Throws mixseq::Error naming the model.lstm_lm key for invalid config values, or for vocab_size < 2.
  // Without `output_layer` the model is an encoder only (a sentence classifier's: models/
  // sentence_classifier.h): no projection, output vectors or bias, so that nothing in it goes
  // untrained; forward() and log_probs() then throw, encode() works, and a language model's
  // checkpoint loads into it (its output layer's tensors are not read).
  LstmLmModelImpl(const LstmLmConfig& config, int64_t vocab_size, bool output_layer = true);

  LmOutput forward(const torch::Tensor& tokens, const torch::Tensor& targets, const LmMemory& memory) override;
  LmLogProbs log_probs(const torch::Tensor& tokens, const LmMemory& memory) override;
  int64_t vocab_size() const override { return vocab_size_; }
  // Kept for context(); changes nothing (see above). Throws for mem_len < 0 or clamp_len < -1.
  void set_context(const LmContext& context) override;
  LmContext context() const override { return context_; }

  // The last LSTM layer's output [B, T, H], before the output dropout and the projection.
  std::pair<torch::Tensor, LmMemory> encode(const torch::Tensor& tokens, const LmMemory& memory) override;
  int64_t state_size() const override { return hidden_size_; }
  // Each LSTM layer from the last, the first with the word vectors.
  std::vector<std::vector<torch::Tensor>> layer_groups() const override;

  // The word vectors [V, E] and the output vectors [V, E or H] in use: one tensor with tie_weights.
  const torch::Tensor& embedding_weight() const { return embedding_->weight; }
  const torch::Tensor& output_weight() const { return tie_weights_ ? embedding_->weight : output_weight_; }
  int64_t num_layers() const { return static_cast<int64_t>(layers_->size()); }

 private:
  // tokens [B, T] -> the vectors the output layer scores [B, T, E or H] (encode(), then dropout and
  // the projection), and the next memory.
  std::pair<torch::Tensor, LmMemory> hidden_states(const torch::Tensor& tokens, const LmMemory& memory);
  // hidden [N, E or H] -> log p(v | hidden[n]) [N, V] fp32 (fp64 for fp64 parameters).
  torch::Tensor output_log_probs(const torch::Tensor& hidden) const;

  int64_t vocab_size_;
  int64_t hidden_size_;
  double dropout_embed_;
  double dropout_hidden_;
  double dropout_output_;
  double weight_drop_;
  bool tie_weights_;
  bool output_layer_;
  LmContext context_;
  torch::nn::Embedding embedding_;           // "embedding": [V, E]
  torch::nn::ModuleList layers_;             // "layers": num_layers x torch::nn::LSTM (one layer, batch first)
  torch::nn::Linear projection_{nullptr};    // "projection": H -> E, no bias; only tied with H != E
  torch::Tensor output_weight_;              // "output_weight" [V, H]; undefined when tied
  torch::Tensor output_bias_;                // "output_bias" [V]
  TransposedWeight output_columns_;          // the output matrix as [H, V] for forward() in evaluation
  std::vector<LstmPanelCache> panel_caches_;  // each layer's W_hh laid out for evaluation (nn/lstm_recurrence.h)
};
TORCH_MODULE(LstmLmModel);

}  // namespace mixseq
