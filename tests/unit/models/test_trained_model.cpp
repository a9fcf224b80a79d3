#include "mixseq/models/trained_model.h"

#include <gtest/gtest.h>

#include "mixseq/data/prepared_data.h"
#include "mixseq/models/checkpoint.h"
#include "mixseq/models/registry.h"
#include "mixseq/train/train_config.h"  // checkpoints store a whole training config
#include "test_support.h"

namespace mixseq {
namespace {

using test::error_of;

// A vocabulary file of the 4 special symbols and 8 letters, in the order given.
std::string vocabulary_text(const std::string& letters) {
  std::string text = "<pad> 0\n<unk> 0\n<s> 0\n</s> 0\n";
  for (const char letter : letters) text += std::string(1, letter) + " 1\n";
  return text;
}

uint64_t fingerprint_of(const test::TempDir& dir, const std::string& text) {
  return vocabulary_fingerprint(Vocabulary::load(dir.write("vocab.txt", text)));
}

// The ids a model was trained on must name the same pieces when it translates: a stored
// vocabulary whose token list differs from the fingerprint recorded at training is refused.
TEST(TrainedModel, RefusesAVocabularyOtherThanTheOneItWasTrainedWith) {
  test::TempDir dir;
  TrainConfig config;
  config.model.gnmt.hidden_size = 8;
  config.model.gnmt.num_layers = 2;
  const auto model = build_seq2seq_model(config.model, 12);
  CheckpointContents contents;
  contents.config_yaml = config_to_yaml(config.fields());
  contents.tokenizer_kind = "none";
  contents.vocabulary_text = vocabulary_text("abcdefgh");
  contents.vocabulary_fingerprint = fingerprint_of(dir, contents.vocabulary_text);
  save_checkpoint(dir.path("good.pt"), contents, *model, nullptr);
  EXPECT_NO_THROW(load_trained_model(dir.path("good.pt"), torch::kCPU));

  contents.vocabulary_text = vocabulary_text("bacdefgh");  // same size, two pieces swapped
  save_checkpoint(dir.path("swapped.pt"), contents, *model, nullptr);
  const auto message = error_of([&] { load_trained_model(dir.path("swapped.pt"), torch::kCPU); });
  EXPECT_NE(message.find("swapped.pt': the vocabulary stored in it"), std::string::npos) << message;
  EXPECT_NE(message.find("is not the one its model was trained with"), std::string::npos) << message;
}

}  // namespace
}  // namespace mixseq
