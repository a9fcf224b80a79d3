#include "mixseq/criteria/label_smoothed_cross_entropy.h"

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "mixseq/nn/bf16_rows.h"
#include "mixseq/nn/softmax_rows.h"
#include "mixseq/text/vocabulary.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

// The loss from LibTorch's ops, for logits off the CPU.
CrossEntropySums composite_cross_entropy(const at::Tensor& logits, const at::Tensor& targets, double epsilon) {
  const auto log_probs = at::log_softmax(logits, /*dim=*/-1, at::kFloat);           // [B, T, V] fp32
  const auto pad = targets.eq(kPadId);                                               // [B, T]
  const auto nll = -log_probs.gather(/*dim=*/-1, targets.unsqueeze(-1)).squeeze(-1);  // [B, T]
  const auto nll_sum = nll.masked_fill(pad, 0.0).sum();                              // []

  CrossEntropySums sums;
  sums.tokens = pad.logical_not().sum();
  sums.nll = nll_sum.detach();
  if (epsilon == 0.0) {
    sums.loss = nll_sum;
    return sums;
  }
  const auto uniform = -log_probs.mean(/*dim=*/-1);                                 // [B, T]
  sums.loss = (1.0 - epsilon) * nll_sum + epsilon * uniform.masked_fill(pad, 0.0).sum();
  return sums;
}

// log Σ_v exp(z_v) and Σ_v z_v of a row: in SIMD registers for fp32 (nn/softmax_rows.h), plainly
// for fp64.
SoftmaxRowStats row_stats(const float* z, int64_t n, float* scratch) { return softmax_row_stats(z, n, scratch); }
struct DoubleRowStats {
  double log_sum_exp, sum;
};
DoubleRowStats row_stats(const double* z, int64_t n, double*) {
  double max = -std::numeric_limits<double>::infinity(), sum = 0.0, total = 0.0;
  for (int64_t v = 0; v < n; ++v) max = std::max(max, z[v]), sum += z[v];
  for (int64_t v = 0; v < n; ++v) total += std::exp(z[v] - max);
  return {max + std::log(total), sum};
}

// p_v = exp(z_v - log_sum_exp).
void row_softmax(const float* z, int64_t n, float log_sum_exp, float* p) { softmax_row(z, n, log_sum_exp, p); }
void row_softmax(const double* z, int64_t n, double log_sum_exp, double* p) {
  for (int64_t v = 0; v < n; ++v) p[v] = std::exp(z[v] - log_sum_exp);
}

// Rows per parallel task: a few hundred thousand logits each.
int64_t rows_per_task(int64_t vocab) { return std::max<int64_t>(1, 262144 / vocab); }

// logits [N, V], targets [N] -> per row (0 where the target is <pad>): log Σ exp(z), the
// smoothed loss and -log p_target, the latter two in fp64 to be summed in a fixed order.
template <typename scalar_t>
void forward_rows(const at::Tensor& logits, const at::Tensor& targets, double epsilon, at::Tensor& log_sum_exp,
                  at::Tensor& row_loss, at::Tensor& row_nll) {
  using acc_t = RowArithmetic<scalar_t>;
  const int64_t V = logits.size(1);
  const scalar_t* z_all = logits.data_ptr<scalar_t>();
  const int64_t* target = targets.data_ptr<int64_t>();
  acc_t* lse = log_sum_exp.data_ptr<acc_t>();
  double* loss = row_loss.data_ptr<double>();
  double* nll = row_nll.data_ptr<double>();
  at::parallel_for(0, logits.size(0), rows_per_task(V), [&](int64_t begin, int64_t end) {
    std::vector<acc_t> buffer(V), scratch(V);
    for (int64_t i = begin; i < end; ++i) {
      if (target[i] == kPadId) {
        lse[i] = 0, loss[i] = 0, nll[i] = 0;
        continue;
      }
      const acc_t* z = widened_row(z_all + i * V, V, buffer.data());
      const auto stats = row_stats(z, V, scratch.data());
      lse[i] = stats.log_sum_exp;
      nll[i] = static_cast<double>(stats.log_sum_exp) - z[target[i]];
      // mean_v -log p_v
      const double uniform = static_cast<double>(stats.log_sum_exp) - static_cast<double>(stats.sum) / V;
      loss[i] = (1.0 - epsilon) * nll[i] + epsilon * uniform;
    }
  });
}

// d loss / d z_v = g (p_v - ε/V - (1 - ε) [v = target]); 0 in rows whose target is <pad>.
template <typename scalar_t>
void backward_rows(const at::Tensor& logits, const at::Tensor& targets, const at::Tensor& log_sum_exp,
                   double epsilon, double grad_loss, at::Tensor& grad_logits) {
  using acc_t = RowArithmetic<scalar_t>;
  const int64_t V = logits.size(1);
  const scalar_t* z_all = logits.data_ptr<scalar_t>();
  const int64_t* target = targets.data_ptr<int64_t>();
  const acc_t* lse = log_sum_exp.data_ptr<acc_t>();
  scalar_t* dz_all = grad_logits.data_ptr<scalar_t>();
  const auto g = static_cast<acc_t>(grad_loss), uniform_share = static_cast<acc_t>(grad_loss * epsilon / V);
  at::parallel_for(0, logits.size(0), rows_per_task(V), [&](int64_t begin, int64_t end) {
    std::vector<acc_t> buffer(V);
    for (int64_t i = begin; i < end; ++i) {
      scalar_t* dz = dz_all + i * V;
      if (target[i] == kPadId) {
        std::fill(dz, dz + V, scalar_t(0));
        continue;
      }
      acc_t* p = buffer.data();
      row_softmax(widened_row(z_all + i * V, V, p), V, lse[i], p);
      for (int64_t v = 0; v < V; ++v) p[v] = g * p[v] - uniform_share;
      p[target[i]] -= static_cast<acc_t>(grad_loss * (1.0 - epsilon));
      store_row<scalar_t>(p, V, dz);
    }
  });
}

// The loss in one pass over the logits on the CPU, forward and backward, with no [B, T, V]
// fp32 log-probabilities: LibTorch's log_softmax, gather, mean and their backward passes
// (and, for bf16 logits, the widening and the gradient's narrowing) took 10-15% of a bf16
// training step at the bench shapes (docs/benchmarks.md). Keeps the logits and one log Σ exp
// per row for backward, which recomputes the softmax.
class FusedCrossEntropy : public torch::autograd::Function<FusedCrossEntropy> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* context, const at::Tensor& logits,
                                                const at::Tensor& targets, double epsilon) {
    const int64_t V = logits.size(-1);
    const auto rows = logits.contiguous().view({-1, V});  // [N, V]
    const auto row_targets = targets.contiguous().view({-1});  // [N]
    const auto arithmetic = rows.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
    auto log_sum_exp = at::empty({rows.size(0)}, rows.options().dtype(arithmetic));
    auto row_loss = at::empty({rows.size(0)}, rows.options().dtype(at::kDouble));
    auto row_nll = at::empty_like(row_loss);
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, rows.scalar_type(), "mixseq::cross_entropy", [&] {
      forward_rows<scalar_t>(rows, row_targets, epsilon, log_sum_exp, row_loss, row_nll);
    });
    auto loss = row_loss.sum().to(at::kFloat), nll = row_nll.sum().to(at::kFloat);
    context->save_for_backward({rows, row_targets, log_sum_exp});
    context->saved_data["epsilon"] = epsilon;
    context->saved_data["shape"] = logits.sizes();
    context->mark_non_differentiable({nll});
    return {loss, nll};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list gradients) {
    const auto saved = context->get_saved_variables();
    const auto &rows = saved[0], &row_targets = saved[1], &log_sum_exp = saved[2];
    const double epsilon = context->saved_data["epsilon"].toDouble();
    const auto shape = context->saved_data["shape"].toIntVector();
    if (!gradients[0].defined()) return {at::zeros(shape, rows.options()), at::Tensor(), at::Tensor()};
    const double grad_loss = gradients[0].item<double>();
    auto grad_rows = at::empty_like(rows);
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, rows.scalar_type(), "mixseq::cross_entropy_backward",
                                    [&] {
                                      backward_rows<scalar_t>(rows, row_targets, log_sum_exp, epsilon, grad_loss,
                                                              grad_rows);
                                    });
    return {grad_rows.view(shape), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

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
  if (!logits.device().is_cpu() || logits.numel() == 0) {
    return composite_cross_entropy(logits, targets, options.smoothing);
  }

  const int64_t V = logits.size(2);
  MIXSEQ_CHECK(targets.ge(0).logical_and(targets.lt(V)).all().item<bool>(),
               "label_smoothed_cross_entropy: targets must lie in [0, ", V, "), the vocabulary of the logits");
  const auto outputs = FusedCrossEntropy::apply(logits, targets, options.smoothing);
  CrossEntropySums sums;
  sums.loss = outputs[0];
  sums.nll = outputs[1];
  sums.tokens = targets.ne(kPadId).sum();
  return sums;
}

}  // namespace mixseq
