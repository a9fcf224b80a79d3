#include "mixseq/models/trained_model.h"

#include <filesystem>

#include "mixseq/data/classification_data.h"
#include "mixseq/data/prepared_data.h"
#include "mixseq/models/registry.h"
#include "mixseq/models/seq2seq_ensemble.h"
#include "mixseq/text/synthesis_symbols.h"
#include "mixseq/util/checksum.h"
#include "mixseq/util/config.h"
#include "mixseq/util/error.h"
#include "mixseq/util/file_bytes.h"
#include "mixseq/util/scratch_folder.h"

namespace mixseq {
namespace {

// Vocabulary and tokenizer load from files: the checkpoint's copies are written to a private
// folder (util/scratch_folder.h) that is removed once they are loaded.
std::string write_scratch_file(const ScratchFolder& folder, const std::string& name, const std::string& bytes) {
  const auto file = folder.path(name);
  write_file_bytes(file, bytes);
  return file;
}

}  // namespace

ModelConfig stored_model_config(const CheckpointContents& contents, const std::string& path) {
  ModelConfig config;
  read_config_yaml_sections(contents.config_yaml, path + " (stored config)",
                            [&](ConfigVisitor& v) { v.section("model", config); });
  return config;
}

namespace {

// What every trained model brings besides its network.
struct CheckpointedText {
  ModelConfig config;
  std::string config_yaml;
  Vocabulary vocabulary;
  std::unique_ptr<Tokenizer> tokenizer;
  std::string quantization;
  std::string source_lang, target_lang;
};

std::string in_file(const std::string& path, const Error& e) { return str_cat("'", path, "': ", e.what()); }

// The stored config's model section, once it is known to be of `family` (before anything else of
// the checkpoint is read: another kind's vocabulary or symbols would fail with a stranger message).
ModelConfig stored_model_config_of(const CheckpointContents& contents, const std::string& checkpoint_path,
                                   const std::string& family) {
  ModelConfig config = stored_model_config(contents, checkpoint_path);
  try {
    check_model_family(config.arch, family);
  } catch (const Error& e) {
    throw Error(in_file(checkpoint_path, e));
  }
  return config;
}

CheckpointedText open_checkpointed_text(const std::string& checkpoint_path, const std::string& family) {
  const auto contents = read_checkpoint_contents(checkpoint_path);
  ModelConfig config = stored_model_config_of(contents, checkpoint_path, family);
  const ScratchFolder scratch("mixseq-model-");
  auto vocabulary = Vocabulary::load(write_scratch_file(scratch, "vocab.txt", contents.vocabulary_text));
  // The ids the model was trained on must name the same pieces here (0: a version 1 checkpoint).
  const uint64_t fingerprint = vocabulary_fingerprint(vocabulary);
  MIXSEQ_CHECK(contents.vocabulary_fingerprint == 0 || fingerprint == contents.vocabulary_fingerprint, "'",
               checkpoint_path, "': the vocabulary stored in it (fingerprint ",
               checksum_hex(fingerprint), ") is not the one its model was trained with (",
               checksum_hex(contents.vocabulary_fingerprint), "); use another checkpoint of the run");
  auto tokenizer = contents.tokenizer_kind == "none"
                       ? load_tokenizer("none")
                       : load_tokenizer(contents.tokenizer_kind + ":" +
                                        write_scratch_file(scratch, "tokenizer." + contents.tokenizer_kind,
                                                           contents.tokenizer_model));
  return {std::move(config), contents.config_yaml, std::move(vocabulary), std::move(tokenizer), contents.quantization,
          contents.source_lang, contents.target_lang};
}

// Returns the scales of the weights the checkpoint stores in 8 bits (models/checkpoint.h).
template <typename Model>
std::map<std::string, torch::Tensor> load_for_inference(const std::string& checkpoint_path, Model& model,
                                                        const torch::Device& device, bool accept_quantized = false) {
  auto int8_weight_scales = load_model_weights(checkpoint_path, *model, accept_quantized);
  model->to(device);
  model->eval();
  return int8_weight_scales;
}

}  // namespace

TrainedModel load_trained_model(const std::string& checkpoint_path, const torch::Device& device,
                                bool accept_quantized) {
  auto [config, config_yaml, vocabulary, tokenizer, quantization, source_lang, target_lang] =
      open_checkpointed_text(checkpoint_path, kSeq2SeqFamily);
  Seq2SeqModel model;
  try {
    model = build_seq2seq_model(config, vocabulary.size());
  } catch (const Error& e) {
    throw Error(in_file(checkpoint_path, e));
  }
  auto int8_weight_scales = load_for_inference(checkpoint_path, model, device, accept_quantized);
  return {std::move(config),    std::move(config_yaml),  std::move(vocabulary),         std::move(tokenizer),
          std::move(model),     std::move(quantization), std::move(int8_weight_scales), std::move(source_lang),
          std::move(target_lang)};
}

TrainedModel load_trained_models(const std::vector<std::string>& checkpoint_paths, const torch::Device& device) {
  MIXSEQ_CHECK(!checkpoint_paths.empty(), "no checkpoint given");
  auto first = load_trained_model(checkpoint_paths.front(), device);
  if (checkpoint_paths.size() == 1) return first;
  const auto first_contents = read_checkpoint_contents(checkpoint_paths.front());
  std::vector<Seq2SeqModel> members = {first.model};
  for (size_t i = 1; i < checkpoint_paths.size(); ++i) {
    const auto& path = checkpoint_paths[i];
    const auto contents = read_checkpoint_contents(path);
    stored_model_config_of(contents, path, kSeq2SeqFamily);  // a language model named as a member: say so first
    // Averaging log-probabilities means something only when id k is the same piece in every model.
    MIXSEQ_CHECK(contents.vocabulary_text == first_contents.vocabulary_text, "'", path,
                 "' has another vocabulary than '", checkpoint_paths.front(),
                 "'; an ensemble needs models trained on the same prepared data");
    MIXSEQ_CHECK(contents.tokenizer_kind == first_contents.tokenizer_kind &&
                     contents.tokenizer_model == first_contents.tokenizer_model,
                 "'", path, "' segments text with another tokenizer than '", checkpoint_paths.front(),
                 "'; an ensemble needs models trained on the same prepared data");
    members.push_back(load_trained_model(path, device).model);
  }
  first.model = std::make_shared<Seq2SeqEnsembleImpl>(std::move(members));
  return first;
}

TrainedLanguageModel load_trained_language_model(const std::string& checkpoint_path, const torch::Device& device) {
  auto [config, config_yaml, vocabulary, tokenizer, quantization, source_lang, target_lang] =
      open_checkpointed_text(checkpoint_path, kLanguageModelFamily);
  LanguageModelModule model;
  try {
    model = build_language_model(config, vocabulary.size());
  } catch (const Error& e) {
    throw Error(in_file(checkpoint_path, e));
  }
  load_for_inference(checkpoint_path, model, device);
  return {std::move(config), std::move(vocabulary), std::move(tokenizer), std::move(model)};
}

TrainedSpeechRecognizer load_trained_speech_recognizer(const std::string& checkpoint_path, const torch::Device& device) {
  const auto contents = read_checkpoint_contents(checkpoint_path);
  TrainedSpeechRecognizer trained;
  trained.config = stored_model_config_of(contents, checkpoint_path, kSpeechRecognizerFamily);
  try {
    trained.symbols = CtcSymbols::from_text(contents.vocabulary_text, checkpoint_path + " (stored symbols)");
    MIXSEQ_CHECK(contents.vocabulary_fingerprint == 0 ||
                     checksum64(contents.vocabulary_text.data(), contents.vocabulary_text.size()) ==
                         contents.vocabulary_fingerprint,
                 "the symbols stored in it are not the ones its model was trained with");
    read_config_yaml_sections(contents.config_yaml, checkpoint_path + " (stored config)", [&](ConfigVisitor& v) {
      v.section("speech", trained.input);
    });
    trained.model = build_speech_recognizer(trained.config, trained.symbols.size());
  } catch (const Error& e) {
    throw Error(in_file(checkpoint_path, e));
  }
  load_for_inference(checkpoint_path, trained.model, device);
  return trained;
}

TrainedSpeechSynthesizer load_trained_speech_synthesizer(const std::string& checkpoint_path,
                                                         const torch::Device& device) {
  const auto contents = read_checkpoint_contents(checkpoint_path);
  TrainedSpeechSynthesizer trained;
  trained.config = stored_model_config_of(contents, checkpoint_path, kSpeechSynthesizerFamily);
  try {
    MIXSEQ_CHECK(contents.vocabulary_text == synthesis_symbols_text(),
                 "its stored input symbols are not this mixseq's synthesis symbols (text/synthesis_symbols.h)");
    read_config_yaml_sections(contents.config_yaml, checkpoint_path + " (stored config)", [&](ConfigVisitor& v) {
      v.section("synthesis", trained.input);
    });
    trained.model = build_speech_synthesizer(trained.config, static_cast<int64_t>(synthesis_symbols().size()));
    trained.input.check();
    MIXSEQ_CHECK(trained.model->frame_bins() == trained.input.frame_bins(), "its model makes ",
                 trained.model->frame_bins(), "-bin frames but its synthesis section says ",
                 trained.input.describe_frames());
  } catch (const Error& e) {
    throw Error(in_file(checkpoint_path, e));
  }
  load_for_inference(checkpoint_path, trained.model, device);
  return trained;
}

TrainedClassifier load_trained_classifier(const std::string& checkpoint_path, const torch::Device& device) {
  auto [config, config_yaml, vocabulary, tokenizer, quantization, source_lang, target_lang] =
      open_checkpointed_text(checkpoint_path, kSentenceClassifierFamily);
  const auto contents = read_checkpoint_contents(checkpoint_path);
  SentenceClassifier model{nullptr};
  std::vector<std::string> labels;
  try {
    model = build_sentence_classifier(config, vocabulary.size());
    MIXSEQ_CHECK(!contents.labels_text.empty(), "it stores no labels");
    labels = parse_labels(contents.labels_text, checkpoint_path + " (stored labels)");
    MIXSEQ_CHECK(static_cast<int64_t>(labels.size()) == model->num_classes(), "it stores ", labels.size(),
                 " labels for a model of ", model->num_classes(), " classes");
  } catch (const Error& e) {
    throw Error(in_file(checkpoint_path, e));
  }
  load_for_inference(checkpoint_path, model, device);
  return {std::move(config), std::move(vocabulary), std::move(tokenizer), std::move(labels), std::move(model)};
}

std::shared_ptr<torch::nn::Module> load_stored_model(const std::string& checkpoint_path, const torch::Device& device) {
  const auto contents = read_checkpoint_contents(checkpoint_path);
  std::string family;
  try {
    family = model_family(stored_model_config(contents, checkpoint_path).arch);
  } catch (const Error& e) {
    throw Error(in_file(checkpoint_path, e));
  }
  if (family == kLanguageModelFamily) return load_trained_language_model(checkpoint_path, device).model;
  if (family == kSpeechRecognizerFamily) return load_trained_speech_recognizer(checkpoint_path, device).model;
  if (family == kSpeechSynthesizerFamily) return load_trained_speech_synthesizer(checkpoint_path, device).model;
  if (family == kSentenceClassifierFamily) return load_trained_classifier(checkpoint_path, device).model.ptr();
  return load_trained_model(checkpoint_path, device).model;  // seq2seq, or the error naming what it is
}

}  // namespace mixseq
