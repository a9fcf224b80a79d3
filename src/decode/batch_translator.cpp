#include "mixseq/decode/batch_translator.h"

#include <ATen/ATen.h>
#include <torch/utils.h>

#include <algorithm>
#include <numeric>

#include "mixseq/data/token_batching.h"
#include "mixseq/nn/eval_mode_scope.h"
#include "mixseq/util/error.h"
#include "mixseq/util/threads.h"
#include "mixseq/util/worker_threads.h"

namespace mixseq {

BatchTranslator::BatchTranslator(Seq2SeqModelImpl& model, const Vocabulary& vocabulary, const Tokenizer& tokenizer,
                                 torch::Device device, Precision precision)
    : model_(model), vocabulary_(vocabulary), tokenizer_(tokenizer), device_(device), precision_(precision) {}

std::vector<std::vector<Hypothesis>> BatchTranslator::translate_ids(const std::vector<std::vector<int64_t>>& sources,
                                                               const TranslateOptions& options) {
  std::vector<std::vector<Hypothesis>> results(sources.size());
  if (sources.empty()) return results;
  std::vector<int64_t> lengths(sources.size());
  for (size_t i = 0; i < sources.size(); ++i) lengths[i] = static_cast<int64_t>(sources[i].size()) + 1;  // + </s>

  const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  const int threads = device_.is_cpu() ? adapt_threads_to_load() : 1;
  const int wanted_workers = device_.is_cpu() ? worker_count(options.workers, threads, lengths.size()) : 1;
  BatchingOptions batching;
  batching.max_tokens = std::max(options.max_tokens, longest);
  if (wanted_workers > 1) {  // a batch for every worker: smaller batches lose less than an idle core
    const int64_t total = std::accumulate(lengths.begin(), lengths.end(), int64_t{0});
    batching.max_tokens = std::max(longest, std::min(batching.max_tokens, (total + wanted_workers - 1) / wanted_workers));
  }
  batching.shuffle = false;
  const auto plan = plan_epoch_batches(lengths, {}, batching, /*epoch=*/1);

  const EvalModeScope eval_mode(model_);
  const auto& batches = plan.batches;
  const auto decode_batch = [&](int64_t index) {
    const auto& batch = batches[static_cast<size_t>(index)];
    int64_t width = 0;
    for (const int64_t i : batch) width = std::max(width, lengths[i]);
    auto source = at::full({static_cast<int64_t>(batch.size()), width}, kPadId, at::kLong);  // [B, S]
    auto source_lengths = at::empty({static_cast<int64_t>(batch.size())}, at::kLong);      // [B]
    for (size_t row = 0; row < batch.size(); ++row) {
      const auto& ids = sources[batch[row]];
      auto* out = source.data_ptr<int64_t>() + row * width;
      std::copy(ids.begin(), ids.end(), out);
      out[ids.size()] = kEosId;
      source_lengths[row] = lengths[batch[row]];
    }
    const AutocastScope autocast(precision_, device_);
    auto hypotheses = beam_search(model_, source.to(device_), source_lengths.to(device_), options.search);
    for (size_t row = 0; row < batch.size(); ++row) results[batch[row]] = std::move(hypotheses[row]);
  };
  const auto count = static_cast<int64_t>(batches.size());
  run_on_workers(count, worker_count(wanted_workers, threads, count), decode_batch);
  return results;
}

std::vector<std::vector<TextHypothesis>> BatchTranslator::translate(const std::vector<std::string>& sources,
                                                               const TranslateOptions& options, int64_t first_line) {
  std::vector<std::vector<std::string>> pieces;
  pieces.reserve(sources.size());
  for (const auto& source : sources) pieces.push_back(tokenizer_.encode(source));
  return translate_pieces(pieces, options, first_line);
}

std::vector<std::vector<TextHypothesis>> BatchTranslator::translate_pieces(
    const std::vector<std::vector<std::string>>& sources, const TranslateOptions& options, int64_t first_line) {
  std::vector<std::vector<int64_t>> ids;
  std::vector<size_t> nonempty;
  for (size_t i = 0; i < sources.size(); ++i) {
    const auto& pieces = sources[i];
    if (pieces.empty()) continue;
    const auto length = static_cast<int64_t>(pieces.size());
    auto kept = pieces.end();
    if (options.max_source_tokens > 0 && length > options.max_source_tokens) {
      MIXSEQ_CHECK(options.truncate_long_sources, "source line ", first_line + static_cast<int64_t>(i), " has ", length,
                   " tokens, more than the limit of ", options.max_source_tokens,
                   "; raise --max-source-tokens, or cut such lines with --truncate-long-sources");
      kept = pieces.begin() + options.max_source_tokens;
    }
    nonempty.push_back(i);
    ids.push_back(kept == pieces.end() ? vocabulary_.encode(pieces)
                                       : vocabulary_.encode(std::vector<std::string>(pieces.begin(), kept)));
  }
  const auto hypotheses = translate_ids(ids, options);
  std::vector<std::vector<TextHypothesis>> results(sources.size(), {TextHypothesis{}});
  for (size_t k = 0; k < nonempty.size(); ++k) {
    auto& texts = results[nonempty[k]];
    texts.clear();
    for (const auto& hypothesis : hypotheses[k]) {
      auto output = vocabulary_.decode(hypothesis.tokens);
      auto text = tokenizer_.decode(output);
      texts.push_back({std::move(text), hypothesis.score, static_cast<int64_t>(hypothesis.tokens.size()),
                       hypothesis.alignment, std::move(output)});
    }
  }
  return results;
}

int64_t BatchTranslator::source_tokens(const std::string& source) const {
  return static_cast<int64_t>(tokenizer_.encode(source).size());
}

std::string BatchTranslator::detokenize(const std::vector<int64_t>& ids) const {
  return tokenizer_.decode(vocabulary_.decode(ids));
}

}  // namespace mixseq
