#include "mixseq/models/seq2seq_ensemble.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "mixseq/models/registry.h"
#include "model_test_support.h"
#include "test_support.h"

namespace mixseq {
namespace {

constexpr int64_t kEnsembleVocab = 13;

// A GNMT and a Transformer: an ensemble's members need only share their vocabulary.
std::vector<Seq2SeqModel> two_members() {
  ModelConfig gnmt;
  gnmt.gnmt.hidden_size = 16;
  gnmt.gnmt.num_layers = 2;
  ModelConfig transformer;
  transformer.arch = "transformer";
  transformer.transformer.embed_dim = 16;
  transformer.transformer.ffn_dim = 32;
  transformer.transformer.heads = 2;
  transformer.transformer.encoder_layers = 1;
  transformer.transformer.decoder_layers = 1;
  std::vector<Seq2SeqModel> members = {build_seq2seq_model(gnmt, kEnsembleVocab), build_seq2seq_model(transformer, kEnsembleVocab)};
  for (auto& member : members) member->eval();
  return members;
}

TEST(Seq2SeqEnsemble, StepAndForwardAverageTheMembersLogProbabilities) {
  torch::manual_seed(3);
  const auto members = two_members();
  Seq2SeqEnsembleImpl ensemble(members);
  ensemble.eval();
  at::NoGradGuard no_grad;
  const auto source = test::random_tokens({5, 3}, kEnsembleVocab);                   // [2, 5]
  const auto lengths = at::tensor(std::vector<int64_t>{5, 3}, at::kLong);  // [2]
  const auto target = test::random_tokens({4, 4}, kEnsembleVocab);                 // [2, 4]

  auto mean = (at::log_softmax(members[0]->forward(source, lengths, target), -1) +
               at::log_softmax(members[1]->forward(source, lengths, target), -1)) / 2;  // [2, 4, V]
  EXPECT_TRUE(ensemble.forward(source, lengths, target).allclose(mean, 1e-5, 1e-5));

  auto state = ensemble.start(source, lengths);
  auto state0 = members[0]->start(source, lengths);
  auto state1 = members[1]->start(source, lengths);
  for (int64_t t = 0; t < 3; ++t) {
    const auto tokens = target.select(1, t);  // [2]
    const auto out = ensemble.step(*state, tokens);
    const auto out0 = members[0]->step(*state0, tokens);
    const auto out1 = members[1]->step(*state1, tokens);
    EXPECT_TRUE(out.logits.allclose((at::log_softmax(out0.logits, -1) + at::log_softmax(out1.logits, -1)) / 2, 1e-5, 1e-5));
    EXPECT_TRUE(out.attention.allclose((out0.attention + out1.attention) / 2, 1e-5, 1e-5));
    // select reaches every member: keep row 1 only.
    if (t == 1) {
      const auto row = at::tensor(std::vector<int64_t>{1, 1}, at::kLong);
      state->select(row);
      state0->select(row);
      state1->select(row);
    }
  }
}

TEST(Seq2SeqEnsemble, NeedsTwoMembersOfOneVocabularySize) {
  auto members = two_members();
  EXPECT_NE(test::error_of([&] { Seq2SeqEnsembleImpl({members[0]}); }).find("at least two models; got 1"),
            std::string::npos);
  ModelConfig bigger;
  bigger.gnmt.hidden_size = 16;
  bigger.gnmt.num_layers = 2;
  members.push_back(build_seq2seq_model(bigger, kEnsembleVocab + 1));
  EXPECT_NE(test::error_of([&] { Seq2SeqEnsembleImpl{members}; }).find("member 2 has 14 vocabulary entries, member 0 has 13"),
            std::string::npos);
}

}  // namespace
}  // namespace mixseq
