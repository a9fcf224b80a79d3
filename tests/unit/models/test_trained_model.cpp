#include "mixseq/models/trained_model.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "mixseq/data/prepared_data.h"
#include "mixseq/models/checkpoint.h"
#include "mixseq/models/registry.h"
#include "mixseq/text/ctc_symbols.h"
#include "mixseq/text/synthesis_symbols.h"
#include "mixseq/train/train_config.h"  // checkpoints store a whole training config
#include "mixseq/util/error.h"
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

// A checkpoint of one kind given to another kind's loader is refused by its family, named with the
// file, before its vocabulary or symbols are read: before, a speech recognizer's symbols given to
// `classify` failed as "vocab.txt:1: no count after token '<blank>'" in a scratch folder, and a
// translation model given to `synthesize` as "its stored input symbols are not ... synthesis symbols".
TEST(TrainedModel, EveryLoaderRefusesAnotherFamilyByName) {
  test::TempDir dir;
  TrainConfig config;
  config.model.gnmt.hidden_size = 8;
  config.model.gnmt.num_layers = 2;
  const auto weights = build_seq2seq_model(config.model, 12);  // never read: the family is checked first
  struct Kind {
    std::string arch, family, vocabulary_text;
  };
  const std::vector<Kind> kinds = {
      {"gnmt", kSeq2SeqFamily, vocabulary_text("abcdefgh")},
      {"lstm_lm", kLanguageModelFamily, vocabulary_text("abcdefgh")},
      {"wave2letter_plus", kSpeechRecognizerFamily, CtcSymbols::english_characters().to_text()},
      {"tacotron2", kSpeechSynthesizerFamily, synthesis_symbols_text()},
      {"lm_classifier", kSentenceClassifierFamily, vocabulary_text("abcdefgh")},
  };
  const std::vector<std::pair<std::string, std::function<void(const std::string&)>>> loaders = {
      {kSeq2SeqFamily, [](const std::string& path) { load_trained_model(path, torch::kCPU); }},
      {kLanguageModelFamily, [](const std::string& path) { load_trained_language_model(path, torch::kCPU); }},
      {kSpeechRecognizerFamily, [](const std::string& path) { load_trained_speech_recognizer(path, torch::kCPU); }},
      {kSpeechSynthesizerFamily, [](const std::string& path) { load_trained_speech_synthesizer(path, torch::kCPU); }},
      {kSentenceClassifierFamily, [](const std::string& path) { load_trained_classifier(path, torch::kCPU); }},
  };
  for (const Kind& kind : kinds) {
    TrainConfig stored = config;
    stored.model.arch = kind.arch;
    CheckpointContents contents;
    contents.config_yaml = config_to_yaml(stored.fields());
    contents.tokenizer_kind = "none";
    contents.vocabulary_text = kind.vocabulary_text;
    contents.labels_text = "neg\npos\n";
    const auto path = dir.path(kind.arch + ".pt");
    save_checkpoint(path, contents, *weights, nullptr);
    for (const auto& [family, load] : loaders) {
      if (family == kind.family) continue;
      const auto message = error_of([&, &load = load] { load(path); });
      const auto expected = str_cat("'", path, "': model.arch '", kind.arch, "' is a ", model_family_description(kind.family),
                                    ", but a ", model_family_description(family), " is needed here");
      EXPECT_NE(message.find(expected), std::string::npos) << kind.arch << " as " << family << ": " << message;
    }
  }
  // A language model among an ensemble's members is named as such, not as "another vocabulary".
  TrainConfig lm = config;
  lm.model.arch = "lstm_lm";
  CheckpointContents contents;
  contents.config_yaml = config_to_yaml(lm.fields());
  contents.tokenizer_kind = "none";
  contents.vocabulary_text = vocabulary_text("zyxwvuts");
  save_checkpoint(dir.path("other_lm.pt"), contents, *weights, nullptr);
  const auto message = error_of([&] { load_trained_models({dir.path("gnmt.pt"), dir.path("other_lm.pt")}, torch::kCPU); });
  EXPECT_NE(message.find("other_lm.pt': model.arch 'lstm_lm' is a language model, but a sequence-to-sequence"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace mixseq
