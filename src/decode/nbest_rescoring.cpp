#include "mixseq/decode/nbest_rescoring.h"

#include <ATen/ATen.h>
#include <torch/utils.h>

#include <algorithm>
#include <numeric>

#include "mixseq/models/checkpoint.h"
#include "mixseq/models/language_model_loss.h"
#include "mixseq/models/registry.h"
#include "mixseq/nn/eval_mode_scope.h"
#include "mixseq/text/vocabulary.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

std::string join_names(const std::vector<std::string>& names) {
  std::string joined;
  for (const auto& name : names) joined += (joined.empty() ? "" : ", ") + name;
  return joined;
}

}  // namespace

SentenceLmScorer::SentenceLmScorer(TrainedLanguageModel language_model, const torch::Device& device,
                                   Precision precision)
    : lm_(std::move(language_model)), device_(device), precision_(precision) {
  MIXSEQ_CHECK(lm_.model && lm_.tokenizer, "SentenceLmScorer: the language model has no model or tokenizer");
  auto context = lm_.model->context();
  if (context.same_length) {  // its band of keys would depend on the padded length of a batch
    context.same_length = false;
    lm_.model->set_context(context);
  }
}

std::shared_ptr<const SentenceLmScorer> SentenceLmScorer::load(const std::string& checkpoint_path,
                                                               const torch::Device& device, Precision precision) {
  // The family first, in words of the option (load_trained_language_model checks it too, in
  // general words: "a language model is needed here").
  const auto config = stored_model_config(read_checkpoint_contents(checkpoint_path), checkpoint_path);
  const auto family = model_family(config.arch);
  MIXSEQ_CHECK(family == kLanguageModelFamily, "'", checkpoint_path, "' is a ", model_family_description(family),
               " with model.arch '", config.arch, "', not a language model; n-best rescoring needs the checkpoint of a ",
               "language model (model.arch ", join_names(model_architectures(kLanguageModelFamily)), ")");
  return std::make_shared<const SentenceLmScorer>(load_trained_language_model(checkpoint_path, device), device,
                                                  precision);
}

std::vector<int64_t> SentenceLmScorer::token_ids(const std::string& text, int64_t* unknown_tokens) const {
  const auto pieces = lm_.tokenizer->encode(text);
  if (unknown_tokens) {
    *unknown_tokens = 0;
    for (const auto& piece : pieces)
      if (piece != kUnkSymbol && !lm_.vocabulary.contains(piece)) ++*unknown_tokens;
  }
  return lm_.vocabulary.encode(pieces);  // unknown pieces as kUnkId
}

std::vector<SentenceLmScore> SentenceLmScorer::score(const std::vector<std::string>& texts, int64_t max_tokens) const {
  MIXSEQ_CHECK(max_tokens >= 1, "n-best rescoring: max_tokens (", max_tokens, ") must be at least 1");
  std::vector<SentenceLmScore> scores(texts.size());
  if (texts.empty()) return scores;
  std::vector<std::vector<int64_t>> ids(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    ids[i] = token_ids(texts[i], &scores[i].unknown_tokens);
    scores[i].tokens = static_cast<int64_t>(ids[i].size()) + 1;  // + </s>
  }
  std::vector<size_t> order(texts.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ids[a].size() > ids[b].size(); });

  const EvalModeScope eval_mode(*lm_.model);
  torch::NoGradGuard no_grad;
  for (size_t begin = 0; begin < order.size();) {
    // Longest first: the first text of a batch sets its width (its pieces and </s>).
    const auto width = static_cast<int64_t>(ids[order[begin]].size()) + 1;
    size_t end = begin + 1;
    while (end < order.size() && static_cast<int64_t>(end - begin + 1) * width <= max_tokens) ++end;
    const auto rows = static_cast<int64_t>(end - begin);
    // input: </s> t_1 .. t_n, target: t_1 .. t_n </s>; padding (kPadId targets) scores 0.
    auto input = at::full({rows, width}, kPadId, at::kLong);   // [B, T]
    auto target = at::full({rows, width}, kPadId, at::kLong);  // [B, T]
    for (int64_t row = 0; row < rows; ++row) {
      const auto& text = ids[order[begin + static_cast<size_t>(row)]];
      auto* in = input.data_ptr<int64_t>() + row * width;
      auto* out = target.data_ptr<int64_t>() + row * width;
      in[0] = kEosId;
      std::copy(text.begin(), text.end(), in + 1);
      std::copy(text.begin(), text.end(), out);
      out[text.size()] = kEosId;
    }
    const auto loss =
        language_model_loss(*lm_.model, input.to(device_), target.to(device_), LmMemory{}, precision_, device_);
    const auto nll = loss.token_nll.to(torch::kCPU, torch::kDouble).sum(1);  // [B]
    const auto* sums = nll.data_ptr<double>();
    for (int64_t row = 0; row < rows; ++row) scores[order[begin + static_cast<size_t>(row)]].log_prob = -sums[row];
    begin = end;
  }
  return scores;
}

int64_t count_words(const std::string& text) {
  int64_t words = 0;
  bool in_word = false;
  for (const char c : text) {
    const bool space = c == ' ' || c == '\t' || c == '\n';
    if (!space && !in_word) ++words;
    in_word = !space;
  }
  return words;
}

std::vector<double> rescored_scores(const std::vector<std::string>& texts, const std::vector<double>& search_scores,
                                    const std::vector<SentenceLmScore>& lm, const NbestRescoringOptions& options) {
  MIXSEQ_CHECK(texts.size() == search_scores.size() && texts.size() == lm.size(),
               "n-best rescoring: ", texts.size(), " texts, ", search_scores.size(), " search scores and ", lm.size(),
               " language-model scores; one of each per hypothesis");
  std::vector<double> scores(texts.size());
  for (size_t i = 0; i < texts.size(); ++i)
    scores[i] = search_scores[i] + options.lm_weight * lm[i].log_prob +
                options.word_bonus * static_cast<double>(count_words(texts[i]));
  return scores;
}

}  // namespace mixseq
