#include "mixseq/models/gnmt.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "mixseq/models/registry.h"
#include "mixseq/nn/parameter_count.h"
#include "mixseq/text/vocabulary.h"
#include "mixseq/util/error.h"
#include "model_test_support.h"
#include "test_support.h"
#include "util/torch_compat.h"

namespace mixseq {
namespace {

constexpr int64_t kGnmtVocab = 50;

GnmtConfig small_config() {
  GnmtConfig config;
  config.hidden_size = 16;
  config.num_layers = 4;
  config.dropout = 0.2;
  config.init_range = 0.1;
  return config;
}

torch::Tensor random_tokens(const std::vector<int64_t>& lengths) { return test::random_tokens(lengths, kGnmtVocab); }

using test::CpuAutocast;


TEST(Gnmt, ParameterCountMatchesTheReference) {
  GnmtConfig config;
  config.hidden_size = 256;
  config.num_layers = 4;
  config.share_embeddings = true;
  // NVIDIA's GNMT(vocab_size=2000, hidden_size=256, num_layers=4, share_embedding=True) has
  // 6,943,185 parameters (sum of p.numel() over model.parameters()).
  EXPECT_EQ(count_parameters(*GnmtModel(config, 2000)), 6943185);

  // Separate embeddings add one V x H matrix. By hand, with H = 256, V = 2000; an LSTM with
  // input I has 4H(I + H) weights and 2 * 4H biases:
  //   embeddings        2 x 2000*256                                        = 1,024,000
  //   encoder layer 1   2 directions x (1024*(256+256) + 2048)               = 1,052,672
  //   encoder layer 2   1024*(512+256) + 2048                                =   788,480
  //   encoder 3, 4      2 x (1024*(256+256) + 2048)                          = 1,052,672
  //   decoder layer 1   1024*(256+256) + 2048                                =   526,336
  //   attention         W_q 256*256 + W_k 256*256 + v 256 + g 1 + b 256      =   131,585
  //   decoder 2..4      3 x (1024*(512+256) + 2048)                          = 2,365,440
  //   classifier        256*2000 + 2000                                      =   514,000
  //   total                                                                  = 7,455,185
  // (shared: 7,455,185 - 512,000 = 6,943,185, the figure above).
  config.share_embeddings = false;
  EXPECT_EQ(count_parameters(*GnmtModel(config, 2000)), 7455185);
}

TEST(Gnmt, RegistersEachModuleOnce) {
  auto config = small_config();
  GnmtModel shared(config, kGnmtVocab);
  const auto names = shared->named_parameters().keys();
  EXPECT_NE(std::find(names.begin(), names.end(), "embedding.weight"), names.end());
  const auto is_embedding = [](const std::string& name) { return name.find("embedding") != std::string::npos; };
  EXPECT_EQ(std::count_if(names.begin(), names.end(), is_embedding), 1);
  config.share_embeddings = false;
  GnmtModel separate(config, kGnmtVocab);
  const auto separate_names = separate->named_parameters().keys();
  EXPECT_NE(std::find(separate_names.begin(), separate_names.end(), "source_embedding.weight"), separate_names.end());
  EXPECT_NE(std::find(separate_names.begin(), separate_names.end(), "target_embedding.weight"), separate_names.end());
}

TEST(Gnmt, InitializesAsTheReference) {
  auto config = small_config();
  config.init_range = 0.05;
  GnmtModel model(config, kGnmtVocab);
  for (const auto& p : model->named_parameters()) {
    const auto& name = p.key();
    const double largest = p.value().abs().max().item<double>();
    if (name.find("bias_hh") != std::string::npos || name == "attention.score_bias") {
      EXPECT_EQ(largest, 0.0) << name;
    } else if (name == "attention.score_g") {
      EXPECT_FLOAT_EQ(p.value().item<float>(), 1.0f / 4.0f) << name;  // 1/sqrt(16)
    } else {
      EXPECT_LE(largest, 0.05) << name;
      EXPECT_GT(largest, 0.02) << name << " looks not uniform in [-0.05, 0.05]";
    }
  }
}

TEST(Gnmt, RejectsInvalidConfigWithTheValue) {
  auto config = small_config();
  config.num_layers = 1;
  EXPECT_NE(test::error_of([&] { GnmtModel(config, kGnmtVocab); }).find("model.gnmt.num_layers must be at least 2"),
            std::string::npos);
  config = small_config();
  config.hidden_size = 0;
  EXPECT_NE(test::error_of([&] { GnmtModel(config, kGnmtVocab); }).find("model.gnmt.hidden_size must be positive, got 0"),
            std::string::npos);
  config = small_config();
  config.dropout = 1.0;
  EXPECT_NE(test::error_of([&] { GnmtModel(config, kGnmtVocab); }).find("model.gnmt.dropout must be in [0, 1), got 1"),
            std::string::npos);
  config = small_config();
  config.dropout = -0.1;
  EXPECT_NE(test::error_of([&] { GnmtModel(config, kGnmtVocab); }).find("got -0.1"), std::string::npos);
  EXPECT_NE(test::error_of([&] { GnmtModel(small_config(), 3); }).find("vocabulary size must be at least 4"),
            std::string::npos);
}

TEST(Gnmt, RegistryBuildsGnmtAndListsKnownNames) {
  ModelConfig config;
  config.gnmt = small_config();
  const auto model = build_seq2seq_model(config, kGnmtVocab);
  EXPECT_NE(std::dynamic_pointer_cast<GnmtModelImpl>(model), nullptr);
  EXPECT_EQ(model->vocab_size(), kGnmtVocab);
  config.arch = "gnmt3";
  EXPECT_EQ(test::error_of([&] { build_seq2seq_model(config, kGnmtVocab); }),
            "unknown model.arch 'gnmt3'; known: deepspeech2, fconv, gnmt, jasper, lm_classifier, lstm_lm, tacotron2, transformer, transformer_xl, wave2letter_plus");
}

TEST(Gnmt, ForwardShapes) {
  at::manual_seed(1);
  GnmtModel model(small_config(), kGnmtVocab);
  const auto logits = model(random_tokens({4, 2, 3}), at::tensor({4, 2, 3}, at::kLong), random_tokens({5, 5, 5}));
  EXPECT_EQ(logits.sizes(), (at::IntArrayRef{3, 5, kGnmtVocab}));
}

TEST(Gnmt, PaddingDoesNotChangeASentence) {
  at::manual_seed(2);
  GnmtModel model(small_config(), kGnmtVocab);
  model->eval();
  const std::vector<int64_t> lengths = {7, 3, 5};  // row 1 is padded with 4 positions
  const auto source = random_tokens(lengths);
  const auto source_lengths = at::tensor(lengths, at::kLong);
  const auto target = random_tokens({6, 6, 6});
  const auto alone_source = source.slice(0, 1, 2).slice(1, 0, 3);  // [1, 3]
  const auto alone_lengths = at::tensor({3}, at::kLong);

  torch::NoGradGuard no_grad;
  const auto batch_state = model->start(source, source_lengths);
  const auto alone_state = model->start(alone_source, alone_lengths);
  const auto& batch_output = dynamic_cast<GnmtState&>(*batch_state).encoder_output;  // [3, 7, H]
  const auto& alone_output = dynamic_cast<GnmtState&>(*alone_state).encoder_output;  // [1, 3, H]
  EXPECT_TRUE(at::allclose(batch_output[1].slice(0, 0, 3), alone_output[0], 1e-5, 1e-6));

  const auto batch_logits = model(source, source_lengths, target);                         // [3, 6, V]
  const auto alone_logits = model(alone_source, alone_lengths, target.slice(0, 1, 2));     // [1, 6, V]
  EXPECT_TRUE(at::allclose(batch_logits[1], alone_logits[0], 1e-5, 1e-5));
  // And the padding's content does not matter either.
  auto noisy_source = source.clone();
  noisy_source[1].slice(0, 3).fill_(kEosId + 1);
  EXPECT_TRUE(at::allclose(model(noisy_source, source_lengths, target), batch_logits, 1e-5, 1e-5));
}

TEST(Gnmt, StepByStepEqualsForward) {
  at::manual_seed(3);
  GnmtModel model(small_config(), kGnmtVocab);
  model->eval();
  const std::vector<int64_t> lengths = {6, 2, 4};
  const auto source = random_tokens(lengths);
  const auto source_lengths = at::tensor(lengths, at::kLong);
  auto target = random_tokens({7, 7, 7});
  target.select(1, 0).fill_(kBosId);

  torch::NoGradGuard no_grad;
  const auto expected = model(source, source_lengths, target);  // [3, 7, V]
  const auto mask = dynamic_cast<GnmtState&>(*model->start(source, source_lengths)).pad_mask;
  auto state = model->start(source, source_lengths);
  for (int64_t t = 0; t < target.size(1); ++t) {
    const auto step = model->step(*state, target.select(1, t));
    ASSERT_EQ(step.logits.sizes(), (at::IntArrayRef{3, kGnmtVocab}));
    ASSERT_EQ(step.attention.sizes(), (at::IntArrayRef{3, 6}));
    EXPECT_TRUE(at::allclose(step.logits, expected.select(1, t), 1e-5, 1e-5)) << "position " << t;
    EXPECT_TRUE(at::allclose(step.attention.sum(-1), at::ones({3}), 1e-5, 1e-6));
    EXPECT_TRUE(at::equal(step.attention.masked_select(mask), at::zeros({mask.sum().item<int64_t>()})));
  }
}

TEST(Gnmt, SelectKeepsPermutesAndRepeatsRows) {
  at::manual_seed(4);
  GnmtModel model(small_config(), kGnmtVocab);
  model->eval();
  const std::vector<int64_t> lengths = {6, 2, 4};
  const auto source = random_tokens(lengths);
  const auto source_lengths = at::tensor(lengths, at::kLong);
  const auto target = random_tokens({3, 3, 3});

  torch::NoGradGuard no_grad;
  auto state = model->start(source, source_lengths);
  auto selected = model->start(source, source_lengths);
  for (int64_t t = 0; t < 2; ++t) {
    model->step(*state, target.select(1, t));
    model->step(*selected, target.select(1, t));
  }
  const auto rows = at::tensor({2, 0, 0, 1}, at::kLong);
  selected->select(rows);
  const auto all = model->step(*state, target.select(1, 2));
  const auto some = model->step(*selected, target.select(1, 2).index_select(0, rows));
  EXPECT_TRUE(at::allclose(some.logits, all.logits.index_select(0, rows), 1e-6, 1e-6));
  EXPECT_TRUE(at::allclose(some.attention, all.attention.index_select(0, rows), 1e-6, 1e-6));
}

// A beam search's rows come in runs of K per sentence: the state keeps one encoder entry per
// sentence (rows_per_source K), and each step equals that of a state with a copy per row; rows
// in no such runs get their copies.
TEST(Gnmt, SelectKeepsOneEncoderEntryPerSentenceForRunsOfBeams) {
  at::manual_seed(8);
  GnmtModel model(small_config(), kGnmtVocab);
  model->eval();
  const std::vector<int64_t> lengths = {6, 2, 4};
  const auto source = random_tokens(lengths);
  const auto source_lengths = at::tensor(lengths, at::kLong);
  const auto target = random_tokens({5, 5, 5, 5, 5, 5, 5, 5, 5});  // [9, 5]: three beams per sentence

  torch::NoGradGuard no_grad;
  auto state = model->start(source, source_lengths);
  auto copies = model->start(source.repeat_interleave(3, 0), source_lengths.repeat_interleave(3));  // a row each
  auto& kept = dynamic_cast<GnmtState&>(*state);
  const auto step_both = [&](int64_t t, const torch::Tensor& rows) {
    const auto tokens = target.select(1, t).index_select(0, rows);
    const auto ours = model->step(*state, tokens);
    const auto theirs = model->step(*copies, tokens);
    EXPECT_TRUE(at::allclose(ours.logits, theirs.logits, 1e-5, 1e-5)) << "step " << t;
    EXPECT_TRUE(at::allclose(ours.attention, theirs.attention, 1e-5, 1e-6)) << "step " << t;
  };
  const auto first = target.select(1, 0).slice(0, 0, 9, 3);  // [3]
  model->step(*state, first);  // one row per sentence, as the beam search's step 0
  model->step(*copies, first.repeat_interleave(3));
  state->select(at::tensor({0, 0, 0, 1, 1, 1, 2, 2, 2}, at::kLong));  // each sentence to its 3 beams
  EXPECT_EQ(kept.rows_per_source, 3);
  EXPECT_EQ(kept.encoder_output.size(0), 3);
  step_both(1, at::arange(9));

  const auto reordered = at::tensor({2, 0, 0, 3, 5, 4, 8, 8, 6}, at::kLong);  // within the sentences
  state->select_within_sources(reordered);
  copies->select(reordered);
  EXPECT_EQ(kept.rows_per_source, 3);
  step_both(2, reordered);

  const auto dropped = at::tensor({4, 3, 3, 6, 7, 8}, at::kLong);  // the first sentence ends
  state->select(dropped);
  copies->select(dropped);
  EXPECT_EQ(kept.rows_per_source, 3);
  EXPECT_EQ(kept.encoder_output.size(0), 2);
  EXPECT_TRUE(at::equal(kept.pad_mask, dynamic_cast<GnmtState&>(*model->start(source, source_lengths)).pad_mask.slice(0, 1)));
  step_both(3, at::tensor({4, 3, 3, 6, 7, 8}, at::kLong));

  const auto uneven = at::tensor({0, 1, 4}, at::kLong);  // runs of 2 and 1: a copy per row
  state->select(uneven);
  copies->select(uneven);
  EXPECT_EQ(kept.rows_per_source, 1);
  EXPECT_EQ(kept.encoder_output.size(0), 3);
  step_both(4, at::tensor({4, 3, 7}, at::kLong));
}

// Beams reordered within their sentences: the encoder output stays, and nothing changes.
TEST(Gnmt, SelectWithinSourcesEqualsSelect) {
  at::manual_seed(6);
  GnmtModel model(small_config(), kGnmtVocab);
  model->eval();
  const std::vector<int64_t> lengths = {6, 2, 4};
  const auto source = random_tokens(lengths);
  const auto source_lengths = at::tensor(lengths, at::kLong);
  const auto target = random_tokens({4, 4, 4}).repeat_interleave(2, 0);  // [6, 4], two beams per sentence

  test::expect_select_within_sources_equals_select(*model, source, source_lengths, target);
}

TEST(Gnmt, StepRejectsAForeignState) {
  struct OtherState : IncrementalState {
    void select(const torch::Tensor&) override {}
  } other;
  GnmtModel model(small_config(), kGnmtVocab);
  EXPECT_THROW(model->step(other, at::tensor({kBosId}, at::kLong)), Error);
}

TEST(Gnmt, TrainsUnderBf16AutocastOnCpu) {
  at::manual_seed(5);
  GnmtModel model(small_config(), kGnmtVocab);
  const std::vector<int64_t> lengths = {6, 2, 4};
  const auto source = random_tokens(lengths);
  const auto source_lengths = at::tensor(lengths, at::kLong);
  const auto target_input = random_tokens({5, 3, 4});
  const auto target_output = random_tokens({5, 3, 4});

  model->eval();
  const auto fp32_logits = model(source, source_lengths, target_input).detach();
  model->train();

  torch::Tensor logits;
  {
    CpuAutocast autocast;
    logits = model(source, source_lengths, target_input);
  }

  EXPECT_EQ(logits.scalar_type(), at::kBFloat16);
  const auto loss = at::cross_entropy_loss(logits.to(at::kFloat).reshape({-1, kGnmtVocab}), target_output.reshape(-1),
                                           /*weight=*/{}, at::Reduction::Mean, /*ignore_index=*/kPadId);
  ASSERT_TRUE(std::isfinite(loss.item<double>()));
  loss.backward();
  for (const auto& p : model->named_parameters()) {
    EXPECT_EQ(p.value().scalar_type(), at::kFloat) << p.key();
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    EXPECT_EQ(p.value().grad().scalar_type(), at::kFloat) << p.key();
    EXPECT_TRUE(at::isfinite(p.value().grad()).all().item<bool>()) << p.key();
  }

  // bf16 has 8 significant bits: without dropout the logits stay close to the fp32 ones.
  model->eval();
  torch::Tensor bf16_logits;
  {
    CpuAutocast autocast;
    bf16_logits = model(source, source_lengths, target_input).detach();
  }
  EXPECT_LT((bf16_logits.to(at::kFloat) - fp32_logits).abs().max().item<double>(), 2e-2);
}

}  // namespace
}  // namespace mixseq
