#include "mixseq/api/translator.h"

#include <mutex>

#include "api/process_setup.h"
#include "mixseq/decode/batch_translator.h"
#include "mixseq/decode/stored_search.h"
#include "mixseq/quant/quantization_plan.h"
#include "mixseq/quant/quantized_model.h"
#include "mixseq/util/error.h"
#include "mixseq/util/mixed_precision.h"

namespace mixseq {

// What `mixseq translate` sets up before its first line (cli/translate_command.cpp is built on
// this): device and precision, the model (float, quantized or an ensemble), the batch translator
// over it and the checkpoint's stored search.
struct Translator::Impl {
  Impl(const std::vector<std::string>& paths, const TranslatorOptions& options)
      : device((api::configure_process_threads(options.threads, "TranslatorOptions::threads"),
                resolve_device(options.device, "device"))),
        precision(resolve_precision(options.precision, device)),
        trained((configure_precision(precision, device), load_translation_model(paths, device))),
        translator(*trained.model, trained.vocabulary, *trained.tokenizer, device, precision),
        source(paths.front()) {
    MIXSEQ_CHECK(options.max_tokens >= 1, "TranslatorOptions::max_tokens is ", options.max_tokens, "; it must be at least 1");
    MIXSEQ_CHECK(options.max_source_tokens >= 0, "TranslatorOptions::max_source_tokens is ", options.max_source_tokens,
                 "; it must be at least 0 (0 = no limit)");
    MIXSEQ_CHECK(options.workers >= 0, "TranslatorOptions::workers is ", options.workers, "; it must be at least 0");
    batch_options.max_tokens = options.max_tokens;
    batch_options.max_source_tokens = options.max_source_tokens;
    batch_options.truncate_long_sources = options.truncate_long_sources;
    batch_options.workers = options.workers;
    batch_options.search = resolve_search_options(trained.config_yaml, source, {});
    check_beam_search_options(batch_options.search, trained.model->vocab_size());
  }

  // The stored search with the caller's settings, checked.
  BeamSearchOptions search(const TranslationOptions& options) const {
    SearchOverrides overrides;
    overrides.beam_size = options.beam_size;
    overrides.length_penalty = options.length_penalty;
    overrides.coverage_penalty = options.coverage_penalty;
    overrides.max_len_a = options.max_len_a;
    overrides.max_len_b = options.max_len_b;
    overrides.nbest = options.nbest;
    auto search = resolve_search_options(trained.config_yaml, source, overrides);
    search.return_alignment = options.return_alignment;
    check_beam_search_options(search, trained.model->vocab_size());
    return search;
  }

  torch::Device device;
  Precision precision;
  TrainedModel trained;
  BatchTranslator translator;
  std::string source;           // the first checkpoint, named in errors about its stored search
  TranslateOptions batch_options;  // search: the stored one, checked
  std::mutex mutex;             // BatchTranslator switches the model's mode: one call at a time
};

Translator::Translator(const std::string& checkpoint_path, const TranslatorOptions& options)
    : Translator(std::vector<std::string>{checkpoint_path}, options) {}

Translator::Translator(const std::vector<std::string>& checkpoint_paths, const TranslatorOptions& options) {
  MIXSEQ_CHECK(!checkpoint_paths.empty(), "Translator needs at least one checkpoint");
  impl_ = std::make_unique<Impl>(checkpoint_paths, options);
}

Translator::~Translator() = default;
Translator::Translator(Translator&&) noexcept = default;
Translator& Translator::operator=(Translator&&) noexcept = default;

namespace {

std::vector<TranslationResult> translation_results(std::vector<std::vector<TextHypothesis>> translations) {
  std::vector<TranslationResult> results(translations.size());
  for (size_t i = 0; i < translations.size(); ++i) {
    auto& result = results[i];
    for (auto& hypothesis : translations[i])
      result.hypotheses.push_back({std::move(hypothesis.text), hypothesis.score, hypothesis.tokens,
                                   std::move(hypothesis.alignment), std::move(hypothesis.pieces)});
    if (!result.hypotheses.empty()) {
      result.text = result.hypotheses.front().text;
      result.score = result.hypotheses.front().score;
    }
  }
  return results;
}

}  // namespace

std::vector<TranslationResult> Translator::translate_batch(const std::vector<std::string>& sentences,
                                                           const TranslationOptions& options) const {
  MIXSEQ_CHECK(impl_, "this Translator was moved from");
  auto batch_options = impl_->batch_options;
  batch_options.search = impl_->search(options);
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  return translation_results(impl_->translator.translate(sentences, batch_options, options.first_line));
}

std::vector<TranslationResult> Translator::translate_batch(const std::vector<std::vector<std::string>>& pieces,
                                                           const TranslationOptions& options) const {
  MIXSEQ_CHECK(impl_, "this Translator was moved from");
  auto batch_options = impl_->batch_options;
  batch_options.search = impl_->search(options);
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  return translation_results(impl_->translator.translate_pieces(pieces, batch_options, options.first_line));
}

std::vector<std::string> Translator::tokenize(const std::string& sentence) const {
  MIXSEQ_CHECK(impl_, "this Translator was moved from");
  return impl_->translator.segment(sentence);
}

std::string Translator::detokenize(const std::vector<std::string>& pieces) const {
  MIXSEQ_CHECK(impl_, "this Translator was moved from");
  return impl_->translator.detokenize(pieces);
}

TranslationOptions Translator::resolve(const TranslationOptions& options) const {
  MIXSEQ_CHECK(impl_, "this Translator was moved from");
  const auto search = impl_->search(options);
  auto resolved = options;
  resolved.beam_size = search.beam_size;
  resolved.length_penalty = search.length_penalty;
  resolved.coverage_penalty = search.coverage_penalty;
  resolved.max_len_a = search.max_len_a;
  resolved.max_len_b = search.max_len_b;
  return resolved;
}

std::string Translator::device() const { return impl_->device.str(); }
std::string Translator::precision() const { return precision_name(impl_->precision); }
std::string Translator::quantization() const {
  if (impl_->trained.quantization.empty()) return "";
  return QuantizationPlan::from_json(impl_->trained.quantization, impl_->source).mode;
}
int64_t Translator::vocabulary_size() const { return impl_->trained.model->vocab_size(); }
std::string Translator::source_language() const { return impl_->trained.source_lang; }
std::string Translator::target_language() const { return impl_->trained.target_lang; }

}  // namespace mixseq
