// TrainedModel: a checkpoint opened for translation (TrainedLanguageModel: for scoring or
// generating text), with everything that came inside it: the model section of the configuration
// it was trained with, its vocabulary, its tokenizer and its weights on the requested device, in
// eval mode.
//
// This is what serving needs (mixseq translate, lm-eval, generate, the demo's translation,
// checkpoint averaging),
// and it lives below train/ so that they need nothing from training: of the training
// configuration a checkpoint stores (train/train_config.h), only the `model` section is read.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mixseq/models/checkpoint.h"
#include "mixseq/models/language_model.h"
#include "mixseq/data/speech_batch.h"
#include "mixseq/data/synthesis_batch.h"
#include "mixseq/models/model_config.h"
#include "mixseq/models/speech_recognizer.h"
#include "mixseq/models/speech_synthesizer.h"
#include "mixseq/text/ctc_symbols.h"
#include "mixseq/models/sentence_classifier.h"
#include "mixseq/models/seq2seq_model.h"
#include "mixseq/text/tokenizer.h"
#include "mixseq/text/vocabulary.h"

namespace mixseq {

struct TrainedModel {
  ModelConfig config;  // the `model` section of the stored training configuration
  std::string config_yaml;  // the whole stored training configuration, for the sections that layers
                            // above models/ read (decode/stored_search.h: validation_search)
  Vocabulary vocabulary;
  std::unique_ptr<Tokenizer> tokenizer;
  Seq2SeqModel model;         // in float, even when loaded from a quantized checkpoint
  std::string quantization;   // the checkpoint's quantization plan (quant/quantization_plan.h); "": float
  // The scales of the weights the checkpoint stores in 8 bits, by parameter name (their float
  // parameters hold scale * value); empty for float checkpoints and those that store fp32 weights.
  std::map<std::string, torch::Tensor> int8_weight_scales;
  // The languages of the data it was trained on (models/checkpoint.h); "" when the checkpoint
  // predates them.
  std::string source_lang, target_lang;
};

struct TrainedLanguageModel {
  ModelConfig config;
  Vocabulary vocabulary;
  std::unique_ptr<Tokenizer> tokenizer;
  LanguageModelModule model;
};

// The `model` section of the training configuration stored in a checkpoint read from `path`
// (named in errors); the other sections are skipped.
ModelConfig stored_model_config(const CheckpointContents& contents, const std::string& path);

// Throws mixseq::Error naming the file when it is not a checkpoint, is corrupt, or holds a
// vocabulary other than the one its model was trained with.
// A checkpoint of the other family (a language model's given to translate, or the reverse) is
// an error that says so, and so is a quantized checkpoint unless `accept_quantized`: the model
// then comes in float with the plan beside it, which quant/quantized_model.h applies.
TrainedModel load_trained_model(const std::string& checkpoint_path, const torch::Device& device,
                                bool accept_quantized = false);
// One checkpoint: load_trained_model. Several: their ensemble (models/seq2seq_ensemble.h), with
// the vocabulary, tokenizer and stored configuration of the first; a checkpoint whose vocabulary
// or tokenizer differs from the first's is an error naming both. Float checkpoints only.
TrainedModel load_trained_models(const std::vector<std::string>& checkpoint_paths, const torch::Device& device);
TrainedLanguageModel load_trained_language_model(const std::string& checkpoint_path, const torch::Device& device);

// A speech recognizer's checkpoint: the model, its output symbols and the input settings (features)
// it was trained with. A checkpoint of another family is an error naming it.
struct TrainedSpeechRecognizer {
  ModelConfig config;
  SpeechInputConfig input;  // the `speech` section of the stored configuration (features, sample rate)
  CtcSymbols symbols;
  SpeechRecognizer model;
};
TrainedSpeechRecognizer load_trained_speech_recognizer(const std::string& checkpoint_path, const torch::Device& device);

// A speech synthesizer's checkpoint: the model and the frame settings it was trained with (the
// `synthesis` section: sample rate, STFT, mel bins), so that its frames go back to audio as they
// were made. A checkpoint of another family, or whose stored symbol table is not
// text/synthesis_symbols.h's, is an error naming it.
struct TrainedSpeechSynthesizer {
  ModelConfig config;
  SynthesisInputConfig input;
  SpeechSynthesizer model;
};
TrainedSpeechSynthesizer load_trained_speech_synthesizer(const std::string& checkpoint_path,
                                                         const torch::Device& device);

// A sentence classifier's checkpoint: the model, its labels in id order, and the vocabulary and
// tokenizer its text is read with. A checkpoint of another family is an error naming it.
struct TrainedClassifier {
  ModelConfig config;
  Vocabulary vocabulary;
  std::unique_ptr<Tokenizer> tokenizer;
  std::vector<std::string> labels;
  SentenceClassifier model;
};
TrainedClassifier load_trained_classifier(const std::string& checkpoint_path, const torch::Device& device);

// Any float checkpoint's model, whatever its family (the loaders above, chosen by the stored
// model.arch, with their checks), in eval mode: for tools that treat every model alike
// (train/checkpoint_average.h).
std::shared_ptr<torch::nn::Module> load_stored_model(const std::string& checkpoint_path, const torch::Device& device);

}  // namespace mixseq
