#include "mixseq/models/registry.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace mixseq {
namespace {

using test::error_of;

TEST(Registry, SaysTheFamilyOfEachArchitecture) {
  EXPECT_EQ(model_family("gnmt"), ModelFamily::kSeq2Seq);
  EXPECT_EQ(model_family("transformer"), ModelFamily::kSeq2Seq);
  EXPECT_EQ(model_family("transformer_xl"), ModelFamily::kLanguageModel);
  EXPECT_EQ(model_architectures(ModelFamily::kSeq2Seq), (std::vector<std::string>{"gnmt", "transformer"}));
  EXPECT_EQ(model_architectures(ModelFamily::kLanguageModel), (std::vector<std::string>{"transformer_xl"}));
  EXPECT_EQ(error_of([] { model_family("lstm"); }),
            "unknown model.arch 'lstm'; known: gnmt, transformer, transformer_xl");
}

// A model of one family where the other is needed is an error that names both families and the
// architectures that would do.
TEST(Registry, RefusesAnArchitectureOfTheOtherFamily) {
  ModelConfig config;
  config.arch = "transformer";
  EXPECT_EQ(error_of([&] { build_language_model(config, 12); }),
            "model.arch 'transformer' is a sequence-to-sequence (translation) model, but a language model is "
            "needed here; architectures of that family: transformer_xl");
  config.arch = "transformer_xl";
  EXPECT_EQ(error_of([&] { build_seq2seq_model(config, 12); }),
            "model.arch 'transformer_xl' is a language model, but a sequence-to-sequence (translation) model is "
            "needed here; architectures of that family: gnmt, transformer");
  config.arch = "gpt";
  EXPECT_EQ(error_of([&] { build_language_model(config, 12); }),
            "unknown model.arch 'gpt'; known: gnmt, transformer, transformer_xl");
}

}  // namespace
}  // namespace mixseq
