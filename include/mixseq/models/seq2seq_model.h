// Seq2SeqModel: what the trainer and the search know of an encoder-decoder model. Each
// architecture (models/gnmt.h, models/transformer.h) implements it; nothing outside
// src/models names an architecture.
//
// Training calls forward() on whole target prefixes (teacher forcing). Search calls start()
// once per batch (it runs the encoder), then step() one target token at a time. The
// IncrementalState carries all a step needs (recurrent states or cached keys and values, and
// the encoder output), so no step recomputes the prefix; the search reorders, repeats or drops
// its rows with select() when it expands sentences into beams, prunes beams or retires
// finished sentences.
//
// Shapes: B batch, S source length, T target length, D model width, V vocabulary.
// Token ids follow text/vocabulary.h: kPadId pads, sources end with kEosId, decoding starts
// from kBosId.
#pragma once

#include <torch/nn/module.h>
#include <torch/types.h>

#include <memory>

namespace mixseq {

class IncrementalState {
 public:
  virtual ~IncrementalState() = default;
  // Keeps rows `rows` ([B'] int64, indices into the current rows, repeats allowed) in that order.
  virtual void select(const torch::Tensor& rows) = 0;
  // As select, when every kept row i has the same source sentence as row i had before (beams
  // reordered within their sentences, none dropped): what was computed from the source alone
  // (encoder output, its projected keys) may stay in place. A beam step that retires no
  // sentence needs only this, and skips copying the encoder's tensors (fairseq does the same).
  virtual void select_within_sources(const torch::Tensor& rows) { select(rows); }

  // Whether step() must fill DecoderStep::attention; a search without coverage penalty clears
  // it, so a model may skip computing the weights.
  bool report_attention = true;
};

struct DecoderStep {
  torch::Tensor logits;     // [B, V] scores of the next token (before softmax)
  torch::Tensor attention;  // [B, S] attention over source positions (0 at padding); undefined
                            // when the model has no single attention to report
};

class Seq2SeqModelImpl : public torch::nn::Module {
 public:
  // source [B, S], source_lengths [B], target_input [B, T] (<s> y1 .. y_{T-1}) -> logits [B, T, V]
  virtual torch::Tensor forward(const torch::Tensor& source, const torch::Tensor& source_lengths,
                                const torch::Tensor& target_input) = 0;

  // Encodes a batch for search: the state before the first target token.
  virtual std::unique_ptr<IncrementalState> start(const torch::Tensor& source, const torch::Tensor& source_lengths) = 0;

  // Feeds one token per row (tokens [B] int64) and returns the scores of the next one;
  // advances `state` by one position.
  virtual DecoderStep step(IncrementalState& state, const torch::Tensor& tokens) = 0;

  virtual int64_t vocab_size() const = 0;
};

using Seq2SeqModel = std::shared_ptr<Seq2SeqModelImpl>;

}  // namespace mixseq
