// Seq2SeqEnsemble: several trained sequence-to-sequence models of one vocabulary behind one
// Seq2SeqModel, so that search, forced scoring and serving take an ensemble as they take a
// model (`mixseq translate -c a.pt -c b.pt`, as fairseq's and Marian's ensembles).
//
// At each step it averages the members' log-probabilities, log P(y) = (1/N) Σ_n log P_n(y)
// (Marian's ensemble, with equal weights); the search's log_softmax then renormalizes that
// geometric mean. forward() does the same over whole targets. The attention reported for the
// coverage penalty is the members' mean; a member that reports none makes the ensemble report
// none. Members may differ in architecture; their vocabularies must be the same size (the
// loader checks they are the same vocabulary, models/trained_model.h).
#pragma once

#include <vector>

#include "mixseq/models/seq2seq_model.h"

namespace mixseq {

class Seq2SeqEnsembleImpl : public Seq2SeqModelImpl {
 public:
  // Throws mixseq::Error for fewer than two members or vocabularies of different sizes.
  explicit Seq2SeqEnsembleImpl(std::vector<Seq2SeqModel> members);

  torch::Tensor forward(const torch::Tensor& source, const torch::Tensor& source_lengths,
                        const torch::Tensor& target_input) override;  // -> [B, T, V] mean log-probabilities
  std::unique_ptr<IncrementalState> start(const torch::Tensor& source, const torch::Tensor& source_lengths) override;
  DecoderStep step(IncrementalState& state, const torch::Tensor& tokens) override;  // logits: mean log-probabilities
  int64_t vocab_size() const override { return members_.front()->vocab_size(); }

 private:
  std::vector<Seq2SeqModel> members_;  // registered as member0, member1, ... so eval() and to() reach them
};

}  // namespace mixseq
