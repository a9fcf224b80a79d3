#include "mixseq/criteria/label_smoothed_cross_entropy.h"

#include <ATen/ATen.h>

#include "mixseq/text/vocabulary.h"
#include "mixseq/util/error.h"

namespace mixseq {

CrossEntropySums label_smoothed_cross_entropy(const at::Tensor& logits, const at::Tensor& targets,
                                              const LabelSmoothingOptions& options) {
  MIXSEQ_CHECK(logits.dim() == 3 && targets.dim() == 2 && logits.size(0) == targets.size(0) &&
                   logits.size(1) == targets.size(1),
               "label_smoothed_cross_entropy: logits must be [B, T, V] and targets [B, T]; got logits ",
               logits.sizes(), " and targets ", targets.sizes());
  MIXSEQ_CHECK(at::isFloatingType(logits.scalar_type()), "label_smoothed_cross_entropy: logits must be floating point, not ",
               logits.scalar_type());
  MIXSEQ_CHECK(targets.scalar_type() == at::kLong, "label_smoothed_cross_entropy: targets must be int64, not ",
               targets.scalar_type());
  MIXSEQ_CHECK(options.smoothing >= 0.0 && options.smoothing <= 1.0, "label smoothing (", options.smoothing,
               ") must lie in [0, 1]; 0.1 is GNMT's and the Transformer's");

  const auto log_probs = at::log_softmax(logits, /*dim=*/-1, at::kFloat);           // [B, T, V] fp32
  const auto pad = targets.eq(kPadId);                                               // [B, T]
  const auto nll = -log_probs.gather(/*dim=*/-1, targets.unsqueeze(-1)).squeeze(-1);  // [B, T]
  const auto nll_sum = nll.masked_fill(pad, 0.0).sum();                              // []

  CrossEntropySums sums;
  sums.tokens = pad.logical_not().sum();
  sums.nll = nll_sum.detach();
  if (options.smoothing == 0.0) {
    sums.loss = nll_sum;
    return sums;
  }
  const auto uniform = -log_probs.mean(/*dim=*/-1);                                 // [B, T]
  const double epsilon = options.smoothing;
  sums.loss = (1.0 - epsilon) * nll_sum + epsilon * uniform.masked_fill(pad, 0.0).sum();
  return sums;
}

}  // namespace mixseq
