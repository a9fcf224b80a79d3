#include "mixseq/optim/fused_adam.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <cmath>
#include <memory>
#include <utility>

#include "optim/closure_loss.h"
#include "optim/fused_step.h"
#include "util/torch_compat.h"
#include "util/vector_clones.h"

// Compiled with -fno-math-errno (src/CMakeLists.txt): std::sqrt setting errno would keep the loop
// scalar.

namespace mixseq {
namespace {

struct StepConstants {
  float beta1, one_minus_beta1, beta2, one_minus_beta2;
  float weight_decay;  // 0: none
  float sqrt_bias_correction2;
  float eps;
  float minus_step_size;  // -lr / (1 - β1^t)
};

// exp_avg.mul_(β1).add_(g, 1 - β1); exp_avg_sq.mul_(β2).addcmul_(g, g, 1 - β2);
// denom = exp_avg_sq.sqrt() / sqrt(bias_correction2) + eps; w.addcdiv_(exp_avg, denom, -step_size).
template <bool kWeightDecay>
__attribute__((always_inline)) inline void adam_loop(float* __restrict w, const float* __restrict grad,
                                                     float* __restrict m, float* __restrict v, int64_t n,
                                                     const StepConstants c) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = kWeightDecay ? grad[i] + c.weight_decay * w[i] : grad[i];
    const float m_i = m[i] * c.beta1 + c.one_minus_beta1 * g;
    const float v_i = v[i] * c.beta2 + c.one_minus_beta2 * g * g;
    const float denom = std::sqrt(v_i) / c.sqrt_bias_correction2 + c.eps;
    m[i] = m_i;
    v[i] = v_i;
    w[i] = w[i] + c.minus_step_size * m_i / denom;
  }
}

MIXSEQ_VECTOR_CLONES
void adam_update(float* w, const float* grad, float* m, float* v, int64_t n, const StepConstants& c) {
  if (c.weight_decay != 0.0f) {
    adam_loop<true>(w, grad, m, v, n, c);
  } else {
    adam_loop<false>(w, grad, m, v, n, c);
  }
}

bool fusable(const at::Tensor& parameter) {
  const auto& grad = parameter.grad();
  return !grad.defined() || (dense_fp32_cpu(parameter) && dense_fp32_cpu(grad));
}

}  // namespace

FusedAdam::FusedAdam(std::vector<at::Tensor> parameters, const torch::optim::AdamOptions& defaults)
    : torch::optim::Adam(std::move(parameters), defaults) {}

at::Tensor FusedAdam::step(LossClosure closure) {
  for (const auto& group : param_groups_) {
    const auto& options = static_cast<const torch::optim::AdamOptions&>(group.options());
    for (const auto& parameter : group.params())
      if (options.amsgrad() || !fusable(parameter)) return torch::optim::Adam::step(std::move(closure));
  }
  at::NoGradGuard no_grad;
  const auto loss = closure_loss(closure);
  for (auto& group : param_groups_) {
    const auto& options = static_cast<const torch::optim::AdamOptions&>(group.options());
    const auto [beta1, beta2] = options.betas();
    for (auto& parameter : group.params()) {
      const auto& grad = parameter.grad();
      if (!grad.defined()) continue;
      const auto key = compat::optimizer_state_key(state_, parameter);
      auto found = state_.find(key);
      if (found == state_.end()) {  // as LibTorch's Adam initializes it
        auto fresh = std::make_unique<torch::optim::AdamParamState>();
        fresh->step(0);
        fresh->exp_avg(at::zeros_like(parameter, at::MemoryFormat::Preserve));
        fresh->exp_avg_sq(at::zeros_like(parameter, at::MemoryFormat::Preserve));
        found = state_.emplace(key, std::move(fresh)).first;
      }
      auto& state = static_cast<torch::optim::AdamParamState&>(*found->second);
      state.step(state.step() + 1);
      const double bias_correction1 = 1 - std::pow(beta1, state.step());
      const double bias_correction2 = 1 - std::pow(beta2, state.step());
      const StepConstants constants{static_cast<float>(beta1),
                                    static_cast<float>(1 - beta1),
                                    static_cast<float>(beta2),
                                    static_cast<float>(1 - beta2),
                                    static_cast<float>(options.weight_decay()),
                                    static_cast<float>(std::sqrt(bias_correction2)),
                                    static_cast<float>(options.eps()),
                                    static_cast<float>(-options.lr() / bias_correction1)};
      float* w = parameter.data_ptr<float>();
      const float* g = grad.data_ptr<float>();
      float* m = state.exp_avg().data_ptr<float>();
      float* v = state.exp_avg_sq().data_ptr<float>();
      at::parallel_for(0, parameter.numel(), 32768, [&](int64_t begin, int64_t end) {
        adam_update(w + begin, g + begin, m + begin, v + begin, end - begin, constants);
      });
      mark_written(parameter);
    }
  }
  return loss;
}

}  // namespace mixseq
