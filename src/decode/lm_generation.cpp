#include "mixseq/decode/lm_generation.h"

#include <torch/utils.h>

#include <algorithm>
#include <cmath>

#include "mixseq/nn/eval_mode_scope.h"
#include "mixseq/text/vocabulary.h"
#include "mixseq/util/error.h"
#include "mixseq/util/random.h"

namespace mixseq {
namespace {

void check_options(const GenerationOptions& options) {
  MIXSEQ_CHECK(options.max_tokens >= 1, "generate: max_tokens (", options.max_tokens, ") must be at least 1");
  MIXSEQ_CHECK(std::isfinite(options.temperature) && options.temperature > 0, "generate: temperature (",
               options.temperature, ") must be positive");
  MIXSEQ_CHECK(options.top_k >= 0, "generate: top_k (", options.top_k, ") must be 0 (off) or positive");
  MIXSEQ_CHECK(options.top_p > 0 && options.top_p <= 1, "generate: top_p (", options.top_p,
               ") must be in (0, 1]; 1 = off");
  MIXSEQ_CHECK(options.prompt_segment >= 1, "generate: prompt_segment (", options.prompt_segment,
               ") must be at least 1");
}

// A draw from `probabilities` [V] (summing to 1) with one uniform number.
int64_t draw(const torch::Tensor& probabilities, PortableRandom& random) {
  const auto cumulative = probabilities.to(torch::kDouble).cumsum(0);
  const double u = random.uniform_real() * cumulative[-1].item<double>();
  const auto index = torch::searchsorted(cumulative, torch::tensor({u}, torch::kDouble), false, /*right=*/true);
  return std::min(index.item<int64_t>(), probabilities.size(0) - 1);
}

}  // namespace

torch::Tensor sampling_distribution(const torch::Tensor& log_probs, const GenerationOptions& options) {
  auto scores = log_probs.to(torch::kFloat) / options.temperature;  // [V]
  const int64_t vocab = scores.size(0);
  if (options.top_k > 0 && options.top_k < vocab) {
    const auto kth = std::get<0>(scores.topk(options.top_k)).select(0, options.top_k - 1);
    scores = scores.masked_fill(scores < kth, -std::numeric_limits<float>::infinity());
  }
  auto probabilities = torch::softmax(scores, 0);
  if (options.top_p < 1) {
    const auto [sorted, order] = probabilities.sort(0, /*descending=*/true);
    // Keep a token when the mass before it is below top_p: the likeliest one always stays.
    const auto mass_before = sorted.cumsum(0) - sorted;
    const auto keep_sorted = mass_before < options.top_p;
    const auto keep = torch::zeros_like(keep_sorted).scatter(0, order, keep_sorted);
    probabilities = probabilities * keep;
    probabilities = probabilities / probabilities.sum();
  }
  return probabilities;
}

std::vector<int64_t> generate_tokens(LanguageModelImpl& model, const std::vector<int64_t>& prompt,
                                     const GenerationOptions& options, const torch::Device& device,
                                     Precision precision, const GeneratedTokenCallback& on_token) {
  check_options(options);
  MIXSEQ_CHECK(!prompt.empty(), "generate: the prompt is empty");
  const EvalModeScope eval_mode(model);
  torch::NoGradGuard no_grad;
  PortableRandom random(options.seed);
  LmMemory memory;
  torch::Tensor last;  // [V] log-probabilities of the token after the last one fed
  const auto feed = [&](const std::vector<int64_t>& ids) {
    const auto tokens = torch::tensor(ids, torch::kLong).unsqueeze(0).to(device);  // [1, T]
    LmLogProbs output;
    {
      const AutocastScope autocast(precision, device);
      output = model.log_probs(tokens, memory);
    }
    memory = std::move(output.memory);
    last = output.log_probs[0][-1].to(torch::kFloat).cpu();
  };
  for (size_t start = 0; start < prompt.size(); start += static_cast<size_t>(options.prompt_segment)) {
    const auto end = std::min(prompt.size(), start + static_cast<size_t>(options.prompt_segment));
    feed(std::vector<int64_t>(prompt.begin() + static_cast<std::ptrdiff_t>(start),
                              prompt.begin() + static_cast<std::ptrdiff_t>(end)));
  }
  std::vector<int64_t> generated;
  while (static_cast<int64_t>(generated.size()) < options.max_tokens) {
    const int64_t next =
        options.greedy ? last.argmax().item<int64_t>() : draw(sampling_distribution(last, options), random);
    generated.push_back(next);
    if (on_token && !on_token(next)) break;
    if (options.stop_at_eos && next == kEosId) break;
    if (static_cast<int64_t>(generated.size()) < options.max_tokens) feed({next});
  }
  return generated;
}

}  // namespace mixseq
