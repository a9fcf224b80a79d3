// GnmtModel: GNMT v2, the LSTM encoder-decoder of Wu et al. 2016 as NVIDIA's PyTorch GNMT
// and the MLPerf translation reference build it (their "v2" moves the attention: the first
// decoder layer's output is the query, and the context feeds every later decoder layer).
//
//   embeddings  one V x H matrix for source and target (share_embeddings), or one each
//   encoder     layer 1 bidirectional (H per direction), layer 2 on its 2H output, layers
//               3..L with residual connections; dropout on the input of every layer
//   decoder     layer 1 reads the target embedding; its output queries the normalized
//               Bahdanau attention over the encoder output; layers 2..L read [output below;
//               context], with residual connections from layer 3; dropout on every layer's
//               input; a linear classifier with bias over the vocabulary
//
// With V = 2000, H = 256, L = 4 and shared embeddings it has 6,943,185 parameters, as the
// reference does. All parameters start uniform in [-init_range, init_range] except the
// LSTMs' hidden-hidden biases (0) and the attention's b (0) and g (1/sqrt(H)), as in the
// reference.
//
// Training (forward) runs each decoder layer over the whole target at once; search runs
// start() then step() per token, carrying a GnmtState. Both share one code path, so step()
// gives the logits forward() gives at the same position, up to rounding.
//
// Mixed precision: run forward/step under autocast with fp32 parameters; the logits come out
// in the autocast dtype. A GnmtModel is not thread-safe; use one per thread.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/rnn.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "mixseq/models/model_config.h"
#include "mixseq/models/seq2seq_model.h"
#include "mixseq/nn/bahdanau_attention.h"
#include "mixseq/nn/bidirectional_lstm.h"
#include "mixseq/nn/lstm.h"
#include "mixseq/nn/quantizable_embedding.h"
#include "mixseq/nn/quantizable_linear.h"
#include "mixseq/nn/quantizable_lstm.h"
#include "mixseq/nn/residual_lstm_stack.h"

namespace mixseq {

// What GnmtModel::step needs of the past: the decoder's recurrent states and the encoder
// output with its projected attention keys. select() keeps rows of all of them.
//
// The encoder's tensors hold one entry per source, and each source has rows_per_source
// consecutive decoder rows (a beam search's K beams): the attention reads a sentence's keys once
// for all its beams, where K copies of them would be read from memory at every step (GNMT's
// beam bench: 80 copies of [30, 256] twice a step, from L3). select() keeps that form where the
// kept rows come in equal runs per source on the CPU, as the beam search's do; otherwise (or on
// another device) it copies the encoder's entries out to one per row.
struct GnmtState : IncrementalState {
  LstmState decoder_lstm_state;                  // decoder layer 1: (h, c), each [1, B, H]
  std::vector<LstmState> decoder_layers_states;  // decoder layers 2..L
  torch::Tensor encoder_output;                  // [B / rows_per_source, S, H]
  torch::Tensor projected_keys;                  // [B / rows_per_source, S, H], W_k encoder_output
  torch::Tensor pad_mask;                        // [B / rows_per_source, S] bool, true at source padding
  int64_t rows_per_source = 1;                   // decoder row b reads encoder entry b / rows_per_source

  void select(const torch::Tensor& rows) override;
  void select_within_sources(const torch::Tensor& rows) override;  // the LSTM states only
};

class GnmtModelImpl : public Seq2SeqModelImpl {
 public:
  // Throws mixseq::Error for invalid config values or vocab_size < 4.
  GnmtModelImpl(const GnmtConfig& config, int64_t vocab_size);

  torch::Tensor forward(const torch::Tensor& source, const torch::Tensor& source_lengths,
                        const torch::Tensor& target_input) override;
  std::unique_ptr<IncrementalState> start(const torch::Tensor& source, const torch::Tensor& source_lengths) override;
  DecoderStep step(IncrementalState& state, const torch::Tensor& tokens) override;
  int64_t vocab_size() const override { return vocab_size_; }

 private:
  GnmtState encode(const torch::Tensor& source, const torch::Tensor& source_lengths);
  // tokens [B, T] -> logits [B, T, V], attention weights [B, T, S]; advances state's LSTM states.
  std::tuple<torch::Tensor, torch::Tensor> decode(const torch::Tensor& tokens, GnmtState& state);

  int64_t vocab_size_;
  int64_t hidden_size_;
  // Registered as "embedding" when shared, else "source_embedding" and "target_embedding".
  QuantizableEmbedding source_embedding_;
  QuantizableEmbedding target_embedding_;  // the same module as source_embedding_ when shared
  BidirectionalLstm encoder_bi_lstm_;      // encoder layer 1
  ResidualLstmStack encoder_layers_;       // encoder layers 2..L
  QuantizableLstm decoder_lstm_;           // decoder layer 1
  BahdanauAttention attention_;
  ResidualLstmStack decoder_layers_;       // decoder layers 2..L
  QuantizableLinear classifier_;
  double dropout_;                         // on the embeddings; the stacks drop their own inputs
};
TORCH_MODULE(GnmtModel);

}  // namespace mixseq
