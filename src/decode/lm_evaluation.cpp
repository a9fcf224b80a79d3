#include "mixseq/decode/lm_evaluation.h"

#include <torch/utils.h>

#include <chrono>
#include <cmath>

#include "mixseq/data/lm_stream.h"
#include "mixseq/models/language_model_loss.h"
#include "mixseq/nn/eval_mode_scope.h"

namespace mixseq {

double LmEvaluation::perplexity() const { return std::exp(loss()); }

LmEvaluation evaluate_language_model(LanguageModelImpl& model, const std::vector<int64_t>& tokens,
                                     const LmEvaluationOptions& options, const torch::Device& device,
                                     Precision precision) {
  using Clock = std::chrono::steady_clock;
  LmStreamOptions stream_options;
  stream_options.batch_size = options.batch_size;
  stream_options.segment_length = options.tgt_len;
  stream_options.rank = options.rank;
  stream_options.world_size = options.world_size;
  LmStream stream(tokens, stream_options);

  const EvalModeScope eval_mode(model);
  torch::NoGradGuard no_grad;
  LmEvaluation result;
  auto nll_sum = torch::zeros({}, torch::dtype(torch::kDouble).device(device));
  LmMemory memory;
  ContinuousCache cache(options.cache);
  const auto started = Clock::now();
  for (int64_t k = 0; options.max_segments == 0 || k < options.max_segments; ++k) {
    const auto segment = stream.next();
    if (!segment) break;
    const auto segment_started = Clock::now();
    const auto input = segment->input.to(device), target = segment->target.to(device);  // [B, T]
    auto loss = language_model_loss(model, input, target, memory, precision, device);
    if (options.cache.window > 0) {
      nll_sum += cache.score(loss.token_nll, loss.states, target).sum().to(torch::kDouble);
    } else {
      nll_sum += loss.nll_sum.to(torch::kDouble);
    }
    memory = std::move(loss.memory);
    result.tokens += loss.targets;
    if (device.is_cuda()) nll_sum.item<double>();  // wait for the device: the latency is the segment's
    result.segment_milliseconds.push_back(
        std::chrono::duration<double, std::milli>(Clock::now() - segment_started).count());
  }
  result.nll_sum = nll_sum.item<double>();
  result.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return result;
}

}  // namespace mixseq
