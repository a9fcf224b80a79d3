// Language-model evaluation: the perplexity of a token stream under a LanguageModelImpl, read as
// Transformer-XL's eval.py reads it. The text is split into B parallel streams (the tail that
// does not fill a row is dropped, as data/lm_stream.h does), cut into segments of T tokens, and
// each segment is scored with the memory the previous one left, so every token but the first
// few sees up to M earlier tokens (M = the model's LmContext::mem_len). The loss is the mean
// negative log-likelihood per scored token, in nats; perplexity is its exponential. With a cache
// window, each token's probability is the mixture of decode/continuous_cache.h instead.
//
// Used by the language-model training loop's validation and by `mixseq lm-eval`, which also
// reports the throughput and the per-segment latencies collected here.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <vector>

#include "mixseq/decode/continuous_cache.h"
#include "mixseq/models/language_model.h"
#include "mixseq/util/mixed_precision.h"

namespace mixseq {

struct LmEvaluationOptions {
  int64_t batch_size = 10;   // B: parallel streams (Transformer-XL eval.py --batch_size 10)
  int64_t tgt_len = 64;      // T: tokens per segment
  int64_t max_segments = 0;  // score only the first N segments (a quick estimate); 0 = the whole text
  int64_t rank = 0;          // data-parallel validation: this rank scores streams [rank*B/W, (rank+1)*B/W)
  int64_t world_size = 1;
  ContinuousCacheOptions cache;  // mix each stream's continuous cache into the model's distribution
                                 // (decode/continuous_cache.h); window 0 = the model alone
};

struct LmEvaluation {
  double nll_sum = 0;   // summed negative log-likelihood of the scored tokens, nats (this rank's)
  int64_t tokens = 0;   // tokens scored (this rank's)
  double seconds = 0;   // wall time of the scoring
  std::vector<double> segment_milliseconds;  // the latency of each segment, in order

  double loss() const { return tokens > 0 ? nll_sum / static_cast<double>(tokens) : 0.0; }
  double perplexity() const;
};

// tokens: the whole text in order, with sentence ends as eos ids. Runs in eval mode under
// NoGradGuard and restores the model's training mode. Throws mixseq::Error when the text is too
// short for B streams.
LmEvaluation evaluate_language_model(LanguageModelImpl& model, const std::vector<int64_t>& tokens,
                                     const LmEvaluationOptions& options, const torch::Device& device,
                                     Precision precision);

}  // namespace mixseq
