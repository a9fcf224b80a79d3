#include "mixseq/optim/gradient_clipping.h"

#include <torch/types.h>
// clip_grad.h uses torch:: tensor functions without including them: after torch/types.h.
#include <torch/nn/utils/clip_grad.h>

#include <limits>

#include "mixseq/util/error.h"

namespace mixseq {

double clip_gradient_norm(const std::vector<at::Tensor>& parameters, const GradientClippingOptions& options) {
  MIXSEQ_CHECK(options.max_norm >= 0.0, "gradient clipping max_norm (", options.max_norm,
               ") must not be negative; 0 disables clipping");
  // An infinite limit makes LibTorch's factor 1: the gradients stay as they are, the norm is measured.
  const double max_norm = options.max_norm > 0.0 ? options.max_norm : std::numeric_limits<double>::infinity();
  return torch::nn::utils::clip_grad_norm_(parameters, max_norm);
}

}  // namespace mixseq
