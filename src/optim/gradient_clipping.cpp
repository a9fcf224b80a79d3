#include "mixseq/optim/gradient_clipping.h"

#include <ATen/Parallel.h>
#include <torch/types.h>
// clip_grad.h uses torch:: tensor functions without including them: after torch/types.h.
#include <torch/nn/utils/clip_grad.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "mixseq/util/error.h"
#include "util/vector_clones.h"

namespace mixseq {
namespace {

// Sum of x_i^2: 16 fp32 lanes over blocks of 4,096 elements, each block's lanes added in fp64.
MIXSEQ_VECTOR_CLONES
double sum_of_squares(const float* x, int64_t n) {
  constexpr int64_t kLanes = 16, kBlock = 4096;
  double total = 0;
  for (int64_t begin = 0; begin < n; begin += kBlock) {
    const int64_t end = std::min(n, begin + kBlock);
    float lanes[kLanes] = {};
    int64_t i = begin;
    for (; i + kLanes <= end; i += kLanes)
      for (int64_t j = 0; j < kLanes; ++j) lanes[j] += x[i + j] * x[i + j];
    for (; i < end; ++i) lanes[0] += x[i] * x[i];
    for (const float lane : lanes) total += lane;
  }
  return total;
}

MIXSEQ_VECTOR_CLONES
void scale(float* x, int64_t n, float factor) {
  for (int64_t i = 0; i < n; ++i) x[i] *= factor;
}

bool on_cpu_in_fp32(const at::Tensor& grad) {
  return grad.device().is_cpu() && grad.scalar_type() == at::kFloat && grad.is_contiguous() && !grad.is_sparse();
}

}  // namespace

double clip_gradient_norm(const std::vector<at::Tensor>& parameters, const GradientClippingOptions& options) {
  MIXSEQ_CHECK(options.max_norm >= 0.0, "gradient clipping max_norm (", options.max_norm,
               ") must not be negative; 0 disables clipping");
  // An infinite limit makes the factor 1: the gradients stay as they are, the norm is measured.
  const double max_norm = options.max_norm > 0.0 ? options.max_norm : std::numeric_limits<double>::infinity();
  std::vector<at::Tensor> grads;
  for (const auto& parameter : parameters)
    if (parameter.grad().defined()) grads.push_back(parameter.grad());
  if (!std::all_of(grads.begin(), grads.end(), on_cpu_in_fp32))
    return torch::nn::utils::clip_grad_norm_(parameters, max_norm);
  // On the CPU, one pass over all gradients for the norm and one to scale them, rather than
  // LibTorch's norm, stack and multiply per parameter (~380 ops for a small Transformer).
  std::vector<double> squares(grads.size());
  at::parallel_for(0, static_cast<int64_t>(grads.size()), 1, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) squares[k] = sum_of_squares(grads[k].data_ptr<float>(), grads[k].numel());
  });
  double total = 0;
  for (const double square : squares) total += square;
  const double norm = std::sqrt(total);
  const double factor = max_norm / (norm + 1e-6);  // PyTorch's arithmetic
  if (!(factor >= 1.0)) {                           // NaN and inf norms scale as PyTorch's do
    at::parallel_for(0, static_cast<int64_t>(grads.size()), 1, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) scale(grads[k].data_ptr<float>(), grads[k].numel(), static_cast<float>(factor));
    });
  }
  return norm;
}

}  // namespace mixseq
