#include "mixseq/nn/token_nll.h"

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <type_traits>
#include <vector>

#include "mixseq/nn/bf16_rows.h"
#include "mixseq/nn/softmax_rows.h"
#include "mixseq/text/vocabulary.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

// Row i's scores in the arithmetic's dtype, plus `bias` [n] (fp32 or fp64, null for none): the
// row as it is when nothing is to be done, otherwise widened and biased into `buffer`.
template <typename scalar_t>
const RowArithmetic<scalar_t>* scores_of(const scalar_t* row, const RowArithmetic<scalar_t>* bias, int64_t n,
                                      RowArithmetic<scalar_t>* buffer) {
  const RowArithmetic<scalar_t>* z = widened_row(row, n, buffer);
  if (bias == nullptr) return z;
  for (int64_t v = 0; v < n; ++v) buffer[v] = z[v] + bias[v];
  return buffer;
}

// log Σ_v exp(z_v) for fp64 rows (fp32 ones: biased_log_sum_exp_in_one_sweep, nn/softmax_rows.h).
double log_sum_exp_of(const double* z, int64_t n) {
  double max = -std::numeric_limits<double>::infinity(), total = 0.0;
  for (int64_t v = 0; v < n; ++v) max = std::max(max, z[v]);
  for (int64_t v = 0; v < n; ++v) total += std::exp(z[v] - max);
  return max + std::log(total);
}

// p_v = exp(z_v - log_sum_exp).
void softmax_of(const float* z, int64_t n, float log_sum_exp, float* p) { softmax_row(z, n, log_sum_exp, p); }
void softmax_of(const double* z, int64_t n, double log_sum_exp, double* p) {
  for (int64_t v = 0; v < n; ++v) p[v] = std::exp(z[v] - log_sum_exp);
}

// Rows per parallel task: a few hundred thousand logits each.
int64_t rows_per_task(int64_t vocab) { return std::max<int64_t>(1, 262144 / vocab); }

// logits [N, V], targets [N] -> log Σ exp(z) [N] and -log p_target [N] (both 0 where the target is
// ignore_index).
template <typename scalar_t>
void forward_rows(const at::Tensor& logits, const at::Tensor& bias, const at::Tensor& targets, int64_t ignore_index,
                  at::Tensor& log_sum_exp, at::Tensor& nll) {
  using acc_t = RowArithmetic<scalar_t>;
  const int64_t V = logits.size(1);
  const scalar_t* z_all = logits.data_ptr<scalar_t>();
  const acc_t* b = bias.numel() > 0 ? bias.data_ptr<acc_t>() : nullptr;
  const int64_t* target = targets.data_ptr<int64_t>();
  acc_t* lse = log_sum_exp.data_ptr<acc_t>();
  acc_t* out = nll.data_ptr<acc_t>();
  at::parallel_for(0, logits.size(0), rows_per_task(V), [&](int64_t begin, int64_t end) {
    // bf16 and fp16 rows widened, fp64 ones biased, into it; fp32 rows are read in place
    std::vector<acc_t> buffer(std::is_same_v<scalar_t, float> ? 0 : V);
    for (int64_t i = begin; i < end; ++i) {
      if (target[i] == ignore_index) {
        lse[i] = 0, out[i] = 0;
        continue;
      }
      if constexpr (std::is_same_v<acc_t, float>) {  // the bias added as the row is read
        const float* z = widened_row(z_all + i * V, V, buffer.data());
        const int64_t t = target[i];
        lse[i] = biased_log_sum_exp_in_one_sweep(z, b, V);
        out[i] = lse[i] - (b != nullptr ? z[t] + b[t] : z[t]);
      } else {
        const acc_t* z = scores_of(z_all + i * V, b, V, buffer.data());
        lse[i] = log_sum_exp_of(z, V);
        out[i] = lse[i] - z[target[i]];
      }
    }
  });
}

// d nll_i / d z_iv = g_i (p_iv - [v = target_i]); 0 in rows whose target is ignore_index. With a bias,
// its gradient Σ_i d nll_i / d z_iv too (grad_bias defined, zeroed, in the arithmetic's dtype):
// each task sums its rows, then adds its sums under a lock.
template <typename scalar_t>
void backward_rows(const at::Tensor& logits, const at::Tensor& bias, const at::Tensor& targets,
                   int64_t ignore_index, const at::Tensor& log_sum_exp, const at::Tensor& grad_nll,
                   at::Tensor& grad_logits,
                   at::Tensor& grad_bias) {
  using acc_t = RowArithmetic<scalar_t>;
  const int64_t V = logits.size(1);
  const scalar_t* z_all = logits.data_ptr<scalar_t>();
  const acc_t* b = bias.numel() > 0 ? bias.data_ptr<acc_t>() : nullptr;
  acc_t* db = grad_bias.defined() ? grad_bias.data_ptr<acc_t>() : nullptr;
  std::mutex db_lock;
  const int64_t* target = targets.data_ptr<int64_t>();
  const acc_t* lse = log_sum_exp.data_ptr<acc_t>();
  const acc_t* g = grad_nll.data_ptr<acc_t>();
  scalar_t* dz_all = grad_logits.data_ptr<scalar_t>();
  at::parallel_for(0, logits.size(0), rows_per_task(V), [&](int64_t begin, int64_t end) {
    std::vector<acc_t> buffer(V), task_db(db != nullptr ? V : 0, acc_t(0));
    for (int64_t i = begin; i < end; ++i) {
      scalar_t* dz = dz_all + i * V;
      if (target[i] == ignore_index || g[i] == 0) {
        std::fill(dz, dz + V, scalar_t(0));
        continue;
      }
      acc_t* p = buffer.data();
      softmax_of(scores_of(z_all + i * V, b, V, p), V, lse[i], p);
      for (int64_t v = 0; v < V; ++v) p[v] *= g[i];
      p[target[i]] -= g[i];
      if (db != nullptr)
        for (int64_t v = 0; v < V; ++v) task_db[v] += p[v];
      store_row<scalar_t>(p, V, dz);
    }
    if (db != nullptr) {
      const std::lock_guard<std::mutex> hold(db_lock);
      for (int64_t v = 0; v < V; ++v) db[v] += task_db[v];
    }
  });
}

class FusedTokenNll : public torch::autograd::Function<FusedTokenNll> {
 public:
  // bias: [V], or empty for none (an undefined input would break Function::apply in LibTorch 1.13).
  static at::Tensor forward(torch::autograd::AutogradContext* context, const at::Tensor& logits,
                            const at::Tensor& bias, const at::Tensor& targets, int64_t ignore_index) {
    const auto rows = logits.contiguous();          // [N, V]
    const auto row_targets = targets.contiguous();  // [N]
    const auto arithmetic = rows.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
    const auto row_bias = bias.numel() > 0 ? bias.to(arithmetic).contiguous() : bias;  // [V] or empty
    auto log_sum_exp = at::empty({rows.size(0)}, rows.options().dtype(arithmetic));
    auto nll = at::empty_like(log_sum_exp);
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, rows.scalar_type(), "mixseq::token_nll", [&] {
      forward_rows<scalar_t>(rows, row_bias, row_targets, ignore_index, log_sum_exp, nll);
    });
    context->save_for_backward({rows, row_bias, row_targets, log_sum_exp});
    context->saved_data["bias_dtype"] = bias.scalar_type();
    context->saved_data["ignore_index"] = ignore_index;
    return nll;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list gradients) {
    const auto saved = context->get_saved_variables();
    const auto &rows = saved[0], &row_bias = saved[1], &row_targets = saved[2], &log_sum_exp = saved[3];
    const auto grad_nll = gradients[0].to(log_sum_exp.scalar_type()).contiguous();  // [N]
    auto grad_rows = at::empty_like(rows);
    auto grad_bias = row_bias.numel() > 0 ? at::zeros_like(row_bias) : at::Tensor();  // [V]
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, rows.scalar_type(), "mixseq::token_nll_backward", [&] {
      backward_rows<scalar_t>(rows, row_bias, row_targets, context->saved_data["ignore_index"].toInt(), log_sum_exp,
                              grad_nll, grad_rows, grad_bias);
    });
    if (grad_bias.defined()) grad_bias = grad_bias.to(context->saved_data["bias_dtype"].toScalarType());
    return {grad_rows, grad_bias, at::Tensor(), at::Tensor()};
  }
};

}  // namespace

torch::Tensor token_nll(const torch::Tensor& logits, const torch::Tensor& targets, const torch::Tensor& bias,
                        int64_t ignore_index) {
  MIXSEQ_CHECK(logits.dim() == 2 && targets.dim() == 1 && logits.size(0) == targets.size(0),
               "token_nll: logits must be [N, V] and targets [N]; got logits ", logits.sizes(), " and targets ",
               targets.sizes());
  MIXSEQ_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == logits.size(1) &&
                                   at::isFloatingType(bias.scalar_type())),
               "token_nll: the bias must be [V = ", logits.size(1), "], got ", bias.sizes());
  MIXSEQ_CHECK(at::isFloatingType(logits.scalar_type()), "token_nll: logits must be floating point, not ",
               logits.scalar_type());
  MIXSEQ_CHECK(targets.scalar_type() == at::kLong, "token_nll: targets must be int64, not ", targets.scalar_type());
  const auto arithmetic = logits.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  if (!logits.device().is_cpu() || logits.numel() == 0) {
    const auto log_probs = at::log_softmax(bias.defined() ? logits + bias : logits, -1, arithmetic);  // [N, V]
    return at::nll_loss(log_probs, targets, {}, at::Reduction::None, ignore_index);
  }
  const int64_t V = logits.size(1);
  MIXSEQ_CHECK(targets.ge(0).logical_and(targets.lt(V)).all().item<bool>(), "token_nll: targets must lie in [0, ", V,
               "), the vocabulary of the logits");
  const auto no_bias = [&] { return at::empty({0}, logits.options().dtype(arithmetic)); };
  return FusedTokenNll::apply(logits, bias.defined() ? bias : no_bias(), targets, ignore_index);
}

}  // namespace mixseq
