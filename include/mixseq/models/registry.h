// The model registry: builds the architecture a ModelConfig names (model.arch).
//
// Every architecture belongs to one family, which says what it is for and which training task
// trains it (train/training_tasks.h): "seq2seq", a sequence-to-sequence model
// (models/seq2seq_model.h) that trains on sentence pairs and translates; "language_model"
// (models/language_model.h), trained on one text stream to score or generate; "speech_recognizer"
// (models/speech_recognizer.h), trained with CTC on transcribed audio; "sentence_classifier"
// (models/sentence_classifier.h), trained on labelled sentences; "speech_synthesizer"
// (models/speech_synthesizer.h), text to spectrogram frames, trained teacher-forced. A family is a
// name, not an enum: a new one is a row in src/models/registry.cpp's family table, its
// architectures' rows, and its task's row in src/train/training_tasks.cpp. Asking for one family
// and naming an architecture of another (a language model's checkpoint given to
// `mixseq translate`) is an error that says so and lists the architectures that would do.
// src/models/registry.cpp is the only place that lists them.
#pragma once

#include <torch/nn/module.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mixseq/models/language_model.h"
#include "mixseq/models/model_config.h"
#include "mixseq/models/sentence_classifier.h"
#include "mixseq/models/seq2seq_model.h"
#include "mixseq/models/speech_recognizer.h"
#include "mixseq/models/speech_synthesizer.h"

namespace mixseq {

// The families' names, as the registry's rows give them.
inline constexpr const char* kSeq2SeqFamily = "seq2seq";
inline constexpr const char* kLanguageModelFamily = "language_model";
inline constexpr const char* kSpeechRecognizerFamily = "speech_recognizer";
inline constexpr const char* kSpeechSynthesizerFamily = "speech_synthesizer";
inline constexpr const char* kSentenceClassifierFamily = "sentence_classifier";

// The family of architecture `arch`; throws mixseq::Error listing the known names for an unknown one.
std::string model_family(const std::string& arch);

// "sequence-to-sequence (translation) model", "language model", ...: a family's name for messages.
std::string model_family_description(const std::string& family);

// Throws mixseq::Error unless architecture `arch` belongs to `family`: an unknown arch lists the
// known ones, another family's names both families and the architectures of this one ("model.arch
// 'tacotron2' is a speech synthesizer, but a sentence classifier is needed here; ..."). The
// build_*() functions below check this; checkpoint loaders check it before reading anything else.
void check_model_family(const std::string& arch, const std::string& family);

// The architectures of `family`, sorted; empty when it has none yet.
std::vector<std::string> model_architectures(const std::string& family);

// The architecture config.arch names, of whatever family. Throws mixseq::Error for an unknown one.
std::shared_ptr<torch::nn::Module> build_model(const ModelConfig& config, int64_t vocab_size);

// The same, as the family's interface: throw mixseq::Error for an unknown config.arch (listing the
// known ones) and for an architecture of another family (naming its family and the architectures
// of this one).
Seq2SeqModel build_seq2seq_model(const ModelConfig& config, int64_t vocab_size);
LanguageModelModule build_language_model(const ModelConfig& config, int64_t vocab_size);
SpeechRecognizer build_speech_recognizer(const ModelConfig& config, int64_t vocab_size);
// vocab_size: the input symbols; 0 keeps the architecture config's own count (tacotron2.n_symbols).
SpeechSynthesizer build_speech_synthesizer(const ModelConfig& config, int64_t vocab_size);
// config.lm_classifier.num_classes must be set (the training task fills in 0 from the data).
SentenceClassifier build_sentence_classifier(const ModelConfig& config, int64_t vocab_size);

}  // namespace mixseq
