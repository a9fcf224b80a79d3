// The continuous cache of Grave, Joulin and Usunier 2017 ("Improving neural language models with a
// continuous cache", ICLR): at evaluation, a language model's distribution is mixed with one that
// copies words seen shortly before, which text such as a Wikipedia article repeats (names, rare
// terms). No training and no parameters: the cache keeps, for each of the B parallel streams, the
// last W positions' states h_i (LmOutput::states, the vectors the output layer scored) paired
// with the word that followed each, x_{i+1}. At position t
//
//   p_cache(w) = sum over kept i < t with x_{i+1} = w of exp(theta h_t . h_i)
//                / sum over kept i < t of exp(theta h_t . h_i)
//   p(w)       = (1 - lambda) p_model(w) + lambda p_cache(w)
//
// and position t, with its target, joins the cache once it is scored (so a segment's later
// positions see its earlier ones). The cache runs across sentence and article ends, as the
// paper's evaluation does: a stream is one text. Where nothing is kept yet (a stream's first
// position) p is p_model. theta and lambda are chosen on held-out text; the paper's WikiText-2
// figures use W 2000 (its Figure 2 searches theta and lambda on the validation split). theta
// scales dot products, so it follows the states' norm: the defaults suit the paper's LSTM, while
// Transformer-XL's layer-normed states (norm about sqrt(D)) wanted theta 0.03 and lambda 0.25 on
// WikiText-2 (docs/benchmarks.md).
//
// Used by `mixseq lm-eval --cache-window` (decode/lm_evaluation.h); it reads the model's output,
// so it works with every architecture of the language-model family.
#pragma once

#include <torch/types.h>

#include <cstdint>

namespace mixseq {

struct ContinuousCacheOptions {
  int64_t window = 0;   // W: earlier positions kept per stream; 0 = no cache
  double theta = 0.3;   // the sharpness of the cache's distribution, > 0
  double lambda = 0.1;  // the cache's weight in the mixture, in [0, 1]
};

// Throws mixseq::Error naming the option that is out of range.
void check_continuous_cache_options(const ContinuousCacheOptions& options);

class ContinuousCache {
 public:
  explicit ContinuousCache(const ContinuousCacheOptions& options);

  // One segment of B streams, after the previous segment of the same rows:
  //   nll     [B, T]      -log p_model(targets), as LmOutput::nll;
  //   states  [B, T, D]   LmOutput::states;
  //   targets [B, T]      int64 ids; kPadId marks a position without a target (its result is 0,
  //                       and it is kept but never counted nor matched).
  // Returns -log p(targets) under the mixture, [B, T] fp32, and keeps the segment's last W
  // positions. A B or D other than the previous segment's is an error; reset() starts afresh.
  torch::Tensor score(const torch::Tensor& nll, const torch::Tensor& states, const torch::Tensor& targets);

  void reset();
  int64_t kept() const { return keys_.defined() ? keys_.size(1) : 0; }  // positions kept per stream, <= W

 private:
  ContinuousCacheOptions options_;
  torch::Tensor keys_;  // [B, N, D] fp32: the states of the last N <= W positions
  torch::Tensor ids_;   // [B, N] int64: the word that followed each
};

}  // namespace mixseq
