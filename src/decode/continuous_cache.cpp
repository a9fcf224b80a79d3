#include "mixseq/decode/continuous_cache.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>

#include "mixseq/text/vocabulary.h"
#include "mixseq/util/error.h"

namespace mixseq {

void check_continuous_cache_options(const ContinuousCacheOptions& options) {
  MIXSEQ_CHECK(options.window >= 0, "the cache window (", options.window, ") must be 0 (no cache) or positive");
  MIXSEQ_CHECK(options.theta > 0 && std::isfinite(options.theta), "the cache theta (", options.theta,
               ") must be positive");
  MIXSEQ_CHECK(options.lambda >= 0 && options.lambda <= 1, "the cache lambda (", options.lambda,
               ") must be in [0, 1]");
}

ContinuousCache::ContinuousCache(const ContinuousCacheOptions& options) : options_(options) {
  check_continuous_cache_options(options);
}

void ContinuousCache::reset() {
  keys_ = torch::Tensor();
  ids_ = torch::Tensor();
}

torch::Tensor ContinuousCache::score(const torch::Tensor& nll, const torch::Tensor& states, const torch::Tensor& targets) {
  MIXSEQ_CHECK(targets.dim() == 2 && nll.sizes() == targets.sizes() && states.dim() == 3 &&
                   states.size(0) == targets.size(0) && states.size(1) == targets.size(1),
               "ContinuousCache: nll ", nll.sizes(), ", states ", states.sizes(), " and targets ", targets.sizes(),
               " must be [B, T], [B, T, D] and [B, T]");
  const int64_t B = targets.size(0), T = targets.size(1), D = states.size(2);
  const auto model_nll = nll.to(at::kFloat);
  const auto valid = targets != kPadId;  // [B, T]
  if (options_.window == 0) return model_nll.masked_fill(valid.logical_not(), 0.0);
  MIXSEQ_CHECK(!keys_.defined() || (keys_.size(0) == B && keys_.size(2) == D), "ContinuousCache: a segment of ",
               B, " streams of width ", D, " after ", keys_.size(0), " of width ", keys_.size(2),
               "; reset() between texts");
  const int64_t N = kept(), W = options_.window, K = N + T;
  const auto queries = states.detach().to(at::kFloat);                          // [B, T, D]
  const auto keys = N > 0 ? at::cat({keys_, queries}, 1) : queries;            // [B, K, D]
  const auto ids = N > 0 ? at::cat({ids_, targets}, 1) : targets;              // [B, K]
  const auto key_valid = N > 0 ? at::cat({ids_ != kPadId, valid}, 1) : valid;  // [B, K]

  // Query t sits at position N + t of the keys and may use keys k with N + t - W <= k < N + t.
  const auto options = targets.options();
  const auto k = at::arange(K, options).unsqueeze(0);          // [1, K]
  const auto q = at::arange(T, options).unsqueeze(1) + N;      // [T, 1]
  const auto in_window = (k < q).logical_and(k >= q - W);      // [T, K]
  const auto allowed = in_window.unsqueeze(0).logical_and(key_valid.unsqueeze(1));     // [B, T, K]
  const auto same_word = ids.unsqueeze(1) == targets.unsqueeze(2);                      // [B, T, K]
  constexpr float kMinusInf = -std::numeric_limits<float>::infinity();
  const auto scores = at::bmm(queries, keys.transpose(1, 2)).mul_(options_.theta).masked_fill_(
      allowed.logical_not(), kMinusInf);                                                // [B, T, K]
  const auto log_total = at::logsumexp(scores, 2);                                     // [B, T]
  const auto log_same = at::logsumexp(scores.masked_fill(same_word.logical_not(), kMinusInf), 2);
  const auto any_kept = allowed.any(2);                                                 // [B, T]

  // ln p = ln((1 - lambda) p_model + lambda p_cache), with p_cache = 0 where no kept word matches.
  const double lambda = options_.lambda;
  const auto log_cache = (log_same - log_total).masked_fill(any_kept.logical_not(), kMinusInf);
  // (A lambda of 0 or 1 makes one term ln 0 = -inf, which logaddexp takes as it should.)
  auto mixed = -at::logaddexp(-model_nll + std::log1p(-lambda), log_cache + std::log(lambda));
  // Nothing kept yet: the model alone (a lambda of 1 would leave no probability at all).
  mixed = at::where(any_kept, mixed, model_nll).masked_fill(valid.logical_not(), 0.0);

  const int64_t keep = std::min<int64_t>(K, W);
  keys_ = keys.narrow(1, K - keep, keep).contiguous();
  ids_ = ids.narrow(1, K - keep, keep).contiguous();
  return mixed;
}

}  // namespace mixseq
