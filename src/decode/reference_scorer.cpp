#include "mixseq/decode/reference_scorer.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>

#include "mixseq/data/token_batching.h"
#include "mixseq/nn/eval_mode_scope.h"
#include "mixseq/util/error.h"

namespace mixseq {

ReferenceScorer::ReferenceScorer(Seq2SeqModelImpl& model, const Vocabulary& vocabulary, const Tokenizer& tokenizer,
                                 torch::Device device, Precision precision)
    : model_(model), vocabulary_(vocabulary), tokenizer_(tokenizer), device_(device), precision_(precision) {}

std::vector<ReferenceScore> ReferenceScorer::score(const std::vector<std::string>& sources,
                                                   const std::vector<std::string>& targets,
                                                   const ReferenceScoreOptions& options) {
  MIXSEQ_CHECK(sources.size() == targets.size(), "score needs one target per source; got ", sources.size(),
               " sources and ", targets.size(), " targets");
  std::vector<ReferenceScore> results(sources.size());
  if (sources.empty()) return results;
  std::vector<std::vector<int64_t>> source_ids, target_ids;
  std::vector<int64_t> source_lengths, target_lengths;  // as the model sees them: with </s>, with <s>
  for (size_t i = 0; i < sources.size(); ++i) {
    source_ids.push_back(vocabulary_.encode(tokenizer_.encode(sources[i])));
    target_ids.push_back(vocabulary_.encode(tokenizer_.encode(targets[i])));
    const auto check_length = [&](const std::vector<int64_t>& ids, int64_t limit, const std::string& name,
                                  const char* flag) {
      const auto length = static_cast<int64_t>(ids.size());
      MIXSEQ_CHECK(limit <= 0 || length <= limit, name, ":", i + 1, ": ", length, " tokens, more than the limit of ",
                   limit, "; raise ", flag, " (0: no limit) or leave such pairs out");
    };
    check_length(source_ids.back(), options.max_source_tokens, options.source_name, "--max-source-tokens");
    check_length(target_ids.back(), options.max_target_tokens, options.target_name, "--max-target-tokens");
    source_lengths.push_back(static_cast<int64_t>(source_ids.back().size()) + 1);
    target_lengths.push_back(static_cast<int64_t>(target_ids.back().size()) + 1);
  }
  BatchingOptions batching;
  batching.max_tokens = std::max(options.max_tokens, *std::max_element(source_lengths.begin(), source_lengths.end()) +
                                                  *std::max_element(target_lengths.begin(), target_lengths.end()));
  batching.shuffle = false;
  const auto plan = plan_epoch_batches(source_lengths, target_lengths, batching, /*epoch=*/1);

  const EvalModeScope eval_mode(model_);
  at::NoGradGuard no_grad;
  for (const auto& batch : plan.batches) {
    const auto rows = static_cast<int64_t>(batch.size());
    int64_t S = 0, T = 0;
    for (const int64_t i : batch) S = std::max(S, source_lengths[i]), T = std::max(T, target_lengths[i]);
    auto source = at::full({rows, S}, kPadId, at::kLong);        // [B, S] x1 .. xn </s>
    auto lengths = at::empty({rows}, at::kLong);                 // [B]
    auto target_input = at::full({rows, T}, kPadId, at::kLong);  // [B, T] <s> y1 .. ym
    auto target_output = at::full({rows, T}, kPadId, at::kLong); // [B, T] y1 .. ym </s>
    for (int64_t row = 0; row < rows; ++row) {
      const auto& x = source_ids[batch[row]];
      const auto& y = target_ids[batch[row]];
      auto* source_row = source.data_ptr<int64_t>() + row * S;
      std::copy(x.begin(), x.end(), source_row);
      source_row[x.size()] = kEosId;
      lengths[row] = source_lengths[batch[row]];
      auto* input_row = target_input.data_ptr<int64_t>() + row * T;
      auto* output_row = target_output.data_ptr<int64_t>() + row * T;
      input_row[0] = kBosId;
      std::copy(y.begin(), y.end(), input_row + 1);
      std::copy(y.begin(), y.end(), output_row);
      output_row[y.size()] = kEosId;
    }
    const AutocastScope autocast(precision_, device_);
    const auto logits = model_.forward(source.to(device_), lengths.to(device_), target_input.to(device_));  // [B, T, V]
    const auto output = target_output.to(device_);
    const auto token_log_probs =
        at::log_softmax(logits.to(at::kFloat), -1).gather(2, output.unsqueeze(2)).squeeze(2);  // [B, T]
    const auto sums = token_log_probs.masked_fill(output == kPadId, 0.0).sum(1).to(at::kDouble).cpu();  // [B]
    for (int64_t row = 0; row < rows; ++row)
      results[batch[row]] = {sums[row].item<double>(), target_lengths[batch[row]]};
  }
  return results;
}

}  // namespace mixseq
