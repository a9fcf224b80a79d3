// The only place that names every architecture and model family (style R3).
#include "mixseq/models/registry.h"

#include <functional>
#include <map>
#include <string>

#include "mixseq/models/conv_ctc.h"
#include "mixseq/models/deepspeech2.h"
#include "mixseq/models/fconv.h"
#include "mixseq/models/gnmt.h"
#include "mixseq/models/lstm_lm.h"
#include "mixseq/models/tacotron2.h"
#include "mixseq/models/transformer.h"
#include "mixseq/models/transformer_xl.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

// A family's name -> how messages call it.
const std::map<std::string, std::string> kModelFamilies = {
    {kSeq2SeqFamily, "sequence-to-sequence (translation) model"},
    {kLanguageModelFamily, "language model"},
    {kSpeechRecognizerFamily, "speech recognizer (CTC acoustic model)"},
    {kSpeechSynthesizerFamily, "speech synthesizer (text to spectrogram frames)"},
    {kSentenceClassifierFamily, "sentence classifier"},
};

struct Architecture {
  std::string family;  // a key of kModelFamilies
  std::function<std::shared_ptr<torch::nn::Module>(const ModelConfig&, int64_t vocab_size)> build;
};

const std::map<std::string, Architecture> kArchitectures = {
    {"fconv", {kSeq2SeqFamily, [](const ModelConfig& c, int64_t vocab) { return FconvModel(c.fconv, vocab).ptr(); }}},
    {"gnmt", {kSeq2SeqFamily, [](const ModelConfig& c, int64_t vocab) { return GnmtModel(c.gnmt, vocab).ptr(); }}},
    {"transformer",
     {kSeq2SeqFamily, [](const ModelConfig& c, int64_t vocab) { return TransformerModel(c.transformer, vocab).ptr(); }}},
    {"transformer_xl", {kLanguageModelFamily, [](const ModelConfig& c, int64_t vocab) {
                          return TransformerXlModel(c.transformer_xl, vocab).ptr();
                        }}},
    {"lm_classifier", {kSentenceClassifierFamily, [](const ModelConfig& c, int64_t vocab) {
                         return SentenceClassifier(c, vocab).ptr();
                       }}},
    {"lstm_lm",
     {kLanguageModelFamily, [](const ModelConfig& c, int64_t vocab) { return LstmLmModel(c.lstm_lm, vocab).ptr(); }}},
    {"jasper", {kSpeechRecognizerFamily, [](const ModelConfig& c, int64_t vocab) {
                  return std::make_shared<ConvCtcModelImpl>(c.jasper, vocab);
                }}},
    {"wave2letter_plus", {kSpeechRecognizerFamily, [](const ModelConfig& c, int64_t vocab) {
                            return std::make_shared<ConvCtcModelImpl>(c.wave2letter_plus, vocab);
                          }}},
    {"deepspeech2", {kSpeechRecognizerFamily, [](const ModelConfig& c, int64_t vocab) {
                       return std::make_shared<DeepSpeech2ModelImpl>(c.deepspeech2, vocab);
                     }}},
    {"tacotron2", {kSpeechSynthesizerFamily, [](const ModelConfig& c, int64_t vocab) {
                     return std::make_shared<Tacotron2ModelImpl>(c.tacotron2, vocab);
                   }}},
};

std::string join(const std::vector<std::string>& names) {
  std::string joined;
  for (const auto& name : names) joined += (joined.empty() ? "" : ", ") + name;
  return joined.empty() ? "none yet" : joined;
}

const Architecture& find_architecture(const std::string& arch) {
  const auto it = kArchitectures.find(arch);
  if (it != kArchitectures.end()) return it->second;
  throw Error(str_cat("unknown model.arch '", arch, "'; known: ", join(architecture_names())));
}

// The architecture as `Family`'s interface, or an error naming both families.
template <typename Family>
std::shared_ptr<Family> build_of_family(const ModelConfig& config, int64_t vocab_size, const std::string& family) {
  check_model_family(config.arch, family);
  const Architecture& architecture = find_architecture(config.arch);
  auto model = std::dynamic_pointer_cast<Family>(architecture.build(config, vocab_size));
  MIXSEQ_CHECK(model != nullptr, "model.arch '", config.arch, "' does not implement the ",
               model_family_description(family), " interface its registry row promises");
  return model;
}

}  // namespace

const std::vector<std::string>& architecture_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const auto& [name, architecture] : kArchitectures) all.push_back(name);
    return all;
  }();
  return names;
}

std::string model_family(const std::string& arch) { return find_architecture(arch).family; }

void check_model_family(const std::string& arch, const std::string& family) {
  const Architecture& architecture = find_architecture(arch);
  MIXSEQ_CHECK(architecture.family == family, "model.arch '", arch, "' is a ",
               model_family_description(architecture.family), ", but a ", model_family_description(family),
               " is needed here; architectures of that family: ", join(model_architectures(family)));
}

std::string model_family_description(const std::string& family) {
  const auto it = kModelFamilies.find(family);
  MIXSEQ_CHECK(it != kModelFamilies.end(), "unknown model family '", family, "'");
  return it->second;
}

std::vector<std::string> model_architectures(const std::string& family) {
  std::vector<std::string> names;
  for (const auto& [name, architecture] : kArchitectures)
    if (architecture.family == family) names.push_back(name);
  return names;
}

std::shared_ptr<torch::nn::Module> build_model(const ModelConfig& config, int64_t vocab_size) {
  return find_architecture(config.arch).build(config, vocab_size);
}

Seq2SeqModel build_seq2seq_model(const ModelConfig& config, int64_t vocab_size) {
  return build_of_family<Seq2SeqModelImpl>(config, vocab_size, kSeq2SeqFamily);
}

LanguageModelModule build_language_model(const ModelConfig& config, int64_t vocab_size) {
  return build_of_family<LanguageModelImpl>(config, vocab_size, kLanguageModelFamily);
}

SpeechRecognizer build_speech_recognizer(const ModelConfig& config, int64_t vocab_size) {
  return build_of_family<SpeechRecognizerImpl>(config, vocab_size, kSpeechRecognizerFamily);
}

SentenceClassifier build_sentence_classifier(const ModelConfig& config, int64_t vocab_size) {
  return SentenceClassifier(build_of_family<SentenceClassifierImpl>(config, vocab_size, kSentenceClassifierFamily));
}

SpeechSynthesizer build_speech_synthesizer(const ModelConfig& config, int64_t vocab_size) {
  return build_of_family<SpeechSynthesizerImpl>(config, vocab_size, kSpeechSynthesizerFamily);
}

}  // namespace mixseq
