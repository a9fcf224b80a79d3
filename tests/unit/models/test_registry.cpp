#include "mixseq/models/registry.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace mixseq {
namespace {

using test::error_of;

TEST(Registry, SaysTheFamilyOfEachArchitecture) {
  EXPECT_EQ(model_family("gnmt"), "seq2seq");
  EXPECT_EQ(model_family("transformer"), "seq2seq");
  EXPECT_EQ(model_family("transformer_xl"), "language_model");
  EXPECT_EQ(model_family("fconv"), "seq2seq");
  EXPECT_EQ(model_architectures("seq2seq"), (std::vector<std::string>{"fconv", "gnmt", "transformer"}));
  EXPECT_EQ(model_architectures("language_model"), (std::vector<std::string>{"lstm_lm", "transformer_xl"}));
  EXPECT_EQ(model_architectures("speech"), std::vector<std::string>{});
  EXPECT_EQ(model_family("tacotron2"), "speech_synthesizer");
  EXPECT_EQ(model_architectures("speech_synthesizer"), std::vector<std::string>{"tacotron2"});
  EXPECT_EQ(model_family_description("seq2seq"), "sequence-to-sequence (translation) model");
  EXPECT_EQ(error_of([] { model_family("lstm"); }),
            "unknown model.arch 'lstm'; known: deepspeech2, fconv, gnmt, jasper, lm_classifier, lstm_lm, tacotron2, transformer, transformer_xl, wave2letter_plus");
}

// A model of one family where the other is needed is an error that names both families and the
// architectures that would do.
TEST(Registry, RefusesAnArchitectureOfTheOtherFamily) {
  ModelConfig config;
  config.arch = "transformer";
  EXPECT_EQ(error_of([&] { build_language_model(config, 12); }),
            "model.arch 'transformer' is a sequence-to-sequence (translation) model, but a language model is "
            "needed here; architectures of that family: lstm_lm, transformer_xl");
  config.arch = "transformer_xl";
  EXPECT_EQ(error_of([&] { build_seq2seq_model(config, 12); }),
            "model.arch 'transformer_xl' is a language model, but a sequence-to-sequence (translation) model is "
            "needed here; architectures of that family: fconv, gnmt, transformer");
  config.arch = "gpt";
  EXPECT_EQ(error_of([&] { build_language_model(config, 12); }),
            "unknown model.arch 'gpt'; known: deepspeech2, fconv, gnmt, jasper, lm_classifier, lstm_lm, tacotron2, transformer, transformer_xl, wave2letter_plus");
}

// build_model builds any family's architecture; the family's builders return the same module type.
TEST(Registry, BuildsAnyArchitectureAsAModule) {
  ModelConfig config;
  config.arch = "transformer_xl";
  config.transformer_xl.n_layer = 1;
  config.transformer_xl.d_model = 8;
  config.transformer_xl.n_head = 2;
  config.transformer_xl.d_head = 4;
  config.transformer_xl.d_inner = 16;
  const auto model = build_model(config, 12);
  EXPECT_NE(std::dynamic_pointer_cast<LanguageModelImpl>(model), nullptr);
  EXPECT_EQ(std::dynamic_pointer_cast<Seq2SeqModelImpl>(model), nullptr);
}

}  // namespace
}  // namespace mixseq
