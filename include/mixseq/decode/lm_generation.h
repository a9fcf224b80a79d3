// Text generation with a language model: the prompt is read (in segments, building the memory),
// then one token at a time is chosen and fed back, the memory carrying up to the model's
// mem_len earlier positions (LmContext), so a long continuation costs the same per token as a
// short one. The next token is the most likely one (greedy) or drawn from the distribution
// reshaped by temperature, top-k (only the k likeliest tokens) and top-p (the smallest set of
// likeliest tokens whose probabilities reach p: nucleus sampling, Holtzman et al. 2020), as
// Hugging Face's and fairseq's samplers define them. Draws use util/random.h's generator, so a
// seed gives the same text on every machine and LibTorch version.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "mixseq/models/language_model.h"
#include "mixseq/util/mixed_precision.h"

namespace mixseq {

struct GenerationOptions {
  int64_t max_tokens = 100;     // tokens to generate after the prompt
  bool greedy = false;          // the likeliest token each time (temperature, top_k, top_p unused)
  double temperature = 1.0;     // divides the log-probabilities before sampling; > 0
  int64_t top_k = 0;            // sample among the k likeliest tokens; 0 = all
  double top_p = 1.0;           // sample within the smallest set of mass >= top_p; 1 = all
  bool stop_at_eos = false;     // end at the first end-of-sentence token (it is included)
  int64_t prompt_segment = 64;  // prompt tokens per forward pass
  uint64_t seed = 1;            // of the sampling
};

// Called with each generated id as soon as it is chosen, so that a long generation can be written
// as it goes (a stop then loses nothing); returning false ends the generation after that id.
using GeneratedTokenCallback = std::function<bool(int64_t id)>;

// Throws mixseq::Error for an empty prompt or options out of range. Returns the generated ids
// (without the prompt).
std::vector<int64_t> generate_tokens(LanguageModelImpl& model, const std::vector<int64_t>& prompt,
                                     const GenerationOptions& options, const torch::Device& device,
                                     Precision precision, const GeneratedTokenCallback& on_token = {});

// The distribution to draw from, for tests: log_probs [V] fp32 -> probabilities [V] after
// temperature, top-k and top-p, summing to 1.
torch::Tensor sampling_distribution(const torch::Tensor& log_probs, const GenerationOptions& options);

}  // namespace mixseq
