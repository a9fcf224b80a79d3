#include "mixseq/models/seq2seq_ensemble.h"

#include <ATen/ATen.h>

#include <string>

#include "mixseq/util/error.h"

namespace mixseq {
namespace {

// One state per member; the search's select() reaches each.
class EnsembleState : public IncrementalState {
 public:
  std::vector<std::unique_ptr<IncrementalState>> members;

  void select(const torch::Tensor& rows) override {
    for (auto& member : members) member->select(rows);
  }
  void select_within_sources(const torch::Tensor& rows) override {
    for (auto& member : members) member->select_within_sources(rows);
  }
};

}  // namespace

Seq2SeqEnsembleImpl::Seq2SeqEnsembleImpl(std::vector<Seq2SeqModel> members) : members_(std::move(members)) {
  MIXSEQ_CHECK(members_.size() >= 2, "an ensemble needs at least two models; got ", members_.size());
  for (size_t i = 0; i < members_.size(); ++i) {
    MIXSEQ_CHECK(members_[i]->vocab_size() == members_.front()->vocab_size(), "ensemble member ", i, " has ",
                 members_[i]->vocab_size(), " vocabulary entries, member 0 has ", members_.front()->vocab_size(),
                 "; ensembled models must share their vocabulary");
    register_module("member" + std::to_string(i), members_[i]);
  }
}

torch::Tensor Seq2SeqEnsembleImpl::forward(const torch::Tensor& source, const torch::Tensor& source_lengths,
                                           const torch::Tensor& target_input) {
  torch::Tensor sum;  // [B, T, V]
  for (auto& member : members_) {
    auto log_probs = at::log_softmax(member->forward(source, source_lengths, target_input).to(at::kFloat), -1);
    sum = sum.defined() ? sum + log_probs : log_probs;
  }
  return sum / static_cast<double>(members_.size());
}

std::unique_ptr<IncrementalState> Seq2SeqEnsembleImpl::start(const torch::Tensor& source,
                                                             const torch::Tensor& source_lengths) {
  auto state = std::make_unique<EnsembleState>();
  for (auto& member : members_) state->members.push_back(member->start(source, source_lengths));
  return state;
}

DecoderStep Seq2SeqEnsembleImpl::step(IncrementalState& state, const torch::Tensor& tokens) {
  auto& ensemble = static_cast<EnsembleState&>(state);
  DecoderStep out;
  bool every_attention = true;
  for (size_t i = 0; i < members_.size(); ++i) {
    ensemble.members[i]->report_attention = state.report_attention;
    const DecoderStep member = members_[i]->step(*ensemble.members[i], tokens);
    const auto log_probs = at::log_softmax(member.logits.to(at::kFloat), -1);  // [B, V]
    out.logits = out.logits.defined() ? out.logits + log_probs : log_probs;
    every_attention = every_attention && member.attention.defined();
    if (every_attention) {
      const auto attention = member.attention.to(at::kFloat);  // [B, S]
      out.attention = out.attention.defined() ? out.attention + attention : attention;
    }
  }
  const auto n = static_cast<double>(members_.size());
  out.logits = out.logits / n;
  out.attention = every_attention ? out.attention / n : torch::Tensor();
  return out;
}

}  // namespace mixseq
