#include "mixseq/api/language_model.h"

#include <mutex>

#include "api/process_setup.h"
#include "mixseq/data/lm_text.h"
#include "mixseq/decode/lm_evaluation.h"
#include "mixseq/decode/lm_generation.h"
#include "mixseq/decode/nbest_rescoring.h"
#include "mixseq/util/error.h"
#include "mixseq/util/mixed_precision.h"
#include "mixseq/util/utf8.h"

namespace mixseq {

namespace {

// Sets a model's context for the length of one call and gives it back (the scorer wants its own).
class ContextScope {
 public:
  ContextScope(LanguageModelImpl& model, const LmContext& context) : model_(model), saved_(model.context()) {
    model_.set_context(context);
  }
  ~ContextScope() { model_.set_context(saved_); }
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  LanguageModelImpl& model_;
  LmContext saved_;
};

}  // namespace

// The three commands' set-up (cli/lm_eval_command.cpp, cli/generate_command.cpp, the rescorer of
// cli/transcribe_command.cpp): device and precision, then the checkpoint. The rescorer owns the
// model and keeps same_length off; perplexity() and generate() set their own context for the call.
struct LanguageModel::Impl {
  Impl(const std::string& path, const LanguageModelOptions& options)
      : device((api::configure_process_threads(options.threads, "LanguageModelOptions::threads"),
                resolve_device(options.device, "device"))),
        precision(resolve_precision(options.precision, device)),
        scorer((configure_precision(precision, device), load(path, device, stored_context)), device, precision) {}

  static TrainedLanguageModel load(const std::string& path, const torch::Device& device, LmContext& context) {
    auto trained = load_trained_language_model(path, device);
    context = trained.model->context();
    return trained;
  }

  const TrainedLanguageModel& trained() const { return scorer.language_model(); }

  torch::Device device;
  Precision precision;
  LmContext stored_context;  // the checkpoint's, as `mixseq generate` runs the model
  SentenceLmScorer scorer;
  std::mutex mutex;  // the model's context and mode change during a call: one call at a time
};

LanguageModel::LanguageModel(const std::string& checkpoint_path, const LanguageModelOptions& options)
    : impl_(std::make_unique<Impl>(checkpoint_path, options)) {}

LanguageModel::~LanguageModel() = default;
LanguageModel::LanguageModel(LanguageModel&&) noexcept = default;
LanguageModel& LanguageModel::operator=(LanguageModel&&) noexcept = default;

std::vector<SentenceScore> LanguageModel::score_batch(const std::vector<std::string>& sentences) const {
  MIXSEQ_CHECK(impl_, "this LanguageModel was moved from");
  for (size_t i = 0; i < sentences.size(); ++i)
    if (const auto bad = find_invalid_utf8(sentences[i]))
      throw Error(str_cat("sentence ", i + 1, ": malformed UTF-8 at byte ", *bad));
  std::vector<SentenceLmScore> scores;
  {
    const std::lock_guard<std::mutex> lock(impl_->mutex);
    scores = impl_->scorer.score(sentences);
  }
  std::vector<SentenceScore> results;
  results.reserve(scores.size());
  for (const auto& score : scores) results.push_back({score.log_prob, score.tokens, score.unknown_tokens});
  return results;
}

TextPerplexity LanguageModel::perplexity(const std::vector<std::string>& lines, const PerplexityOptions& options) const {
  MIXSEQ_CHECK(impl_, "this LanguageModel was moved from");
  MIXSEQ_CHECK(options.batch_size >= 1 && options.tgt_len >= 1, "PerplexityOptions: batch_size (", options.batch_size,
               ") and tgt_len (", options.tgt_len, ") must be at least 1");
  MIXSEQ_CHECK(options.mem_len >= 0 && options.clamp_len >= -1 && options.max_segments >= 0, "PerplexityOptions: mem_len (",
               options.mem_len, ") and max_segments (", options.max_segments, ") must be at least 0, clamp_len (",
               options.clamp_len, ") at least -1");
  const auto& trained = impl_->trained();
  const auto text = encode_lm_lines(lines, *trained.tokenizer, trained.vocabulary);
  LmEvaluationOptions evaluation;
  evaluation.batch_size = options.batch_size;
  evaluation.tgt_len = options.tgt_len;
  evaluation.max_segments = options.max_segments;
  evaluation.cache = {options.cache_window, options.cache_theta, options.cache_lambda};
  try {
    check_continuous_cache_options(evaluation.cache);
  } catch (const Error& e) {
    throw Error(str_cat("PerplexityOptions: ", e.what()));
  }
  LmEvaluation result;
  {
    const std::lock_guard<std::mutex> lock(impl_->mutex);
    const ContextScope context(*trained.model, {options.mem_len, options.clamp_len, options.same_length});
    try {
      result = evaluate_language_model(*trained.model, text.tokens, evaluation, impl_->device, impl_->precision);
    } catch (const Error& e) {
      throw Error(str_cat(lines.size(), " lines (", text.tokens.size(), " tokens): ", e.what()));
    }
  }
  return {result.loss(), result.perplexity(), result.tokens, text.unknown_tokens};
}

std::string LanguageModel::generate(const std::string& prompt, const GenerateOptions& options) const {
  MIXSEQ_CHECK(impl_, "this LanguageModel was moved from");
  MIXSEQ_CHECK(options.mem_len >= -1, "GenerateOptions::mem_len is ", options.mem_len, "; -1 = the model's");
  const auto& trained = impl_->trained();
  const auto ids = encode_prompt(prompt, *trained.tokenizer, trained.vocabulary, "prompt");
  GenerationOptions generation;
  generation.max_tokens = options.max_tokens;
  generation.greedy = options.greedy;
  generation.temperature = options.temperature;
  generation.top_k = options.top_k;
  generation.top_p = options.top_p;
  generation.seed = options.seed;
  generation.stop_at_eos = options.stop_at_eos;
  LmContext context = impl_->stored_context;
  if (options.mem_len >= 0) context.mem_len = options.mem_len;
  std::vector<int64_t> generated;
  {
    const std::lock_guard<std::mutex> lock(impl_->mutex);
    const ContextScope scope(*trained.model, context);
    generated = generate_tokens(*trained.model, ids, generation, impl_->device, impl_->precision);
  }
  // As `mixseq generate` writes it, less its last line break: each line decoded whole, </s> a line break.
  std::string text;
  std::vector<int64_t> line;
  for (const int64_t id : generated) {
    if (id != kEosId) {
      line.push_back(id);
      continue;
    }
    text += trained.tokenizer->decode(trained.vocabulary.decode(line)) + "\n";
    line.clear();
  }
  return text + trained.tokenizer->decode(trained.vocabulary.decode(line));
}

int64_t LanguageModel::vocab_size() const {
  MIXSEQ_CHECK(impl_, "this LanguageModel was moved from");
  return impl_->trained().vocabulary.size();
}

}  // namespace mixseq
