#include "mixseq/optim/lamb.h"

#include <ATen/ATen.h>
#include <torch/optim/serialize.h>
#include <torch/serialize/archive.h>

#include <memory>

#include "mixseq/util/error.h"
#include "optim/closure_loss.h"
#include "util/torch_compat.h"

namespace mixseq {

LambOptions::LambOptions(double lr) : lr_(lr) {}

void LambOptions::serialize(torch::serialize::OutputArchive& archive) const {
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(lr);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(betas);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(eps);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(weight_decay);
}

void LambOptions::serialize(torch::serialize::InputArchive& archive) {
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, lr);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(betas_t, betas);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, eps);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, weight_decay);
}

double LambOptions::get_lr() const { return lr(); }

void LambOptions::set_lr(const double lr) { this->lr(lr); }

void LambParamState::serialize(torch::serialize::OutputArchive& archive) const {
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(exp_avg);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(exp_avg_sq);
}

void LambParamState::serialize(torch::serialize::InputArchive& archive) {
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(at::Tensor, exp_avg);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(at::Tensor, exp_avg_sq);
}

Lamb::Lamb(std::vector<at::Tensor> parameters, const LambOptions& defaults)
    : torch::optim::Optimizer({torch::optim::OptimizerParamGroup(std::move(parameters))},
                              std::make_unique<LambOptions>(defaults)) {
  const auto [beta1, beta2] = defaults.betas();
  MIXSEQ_CHECK(defaults.lr() >= 0.0 && defaults.eps() >= 0.0 && defaults.weight_decay() >= 0.0,
               "LAMB: lr (", defaults.lr(), "), eps (", defaults.eps(), ") and weight_decay (", defaults.weight_decay(),
               ") must not be negative");
  MIXSEQ_CHECK(beta1 >= 0.0 && beta1 < 1.0 && beta2 >= 0.0 && beta2 < 1.0, "LAMB: betas (", beta1, ", ", beta2,
               ") must lie in [0, 1)");
}

at::Tensor Lamb::step(LossClosure closure) {
  at::NoGradGuard no_grad;
  const auto loss = closure_loss(closure);
  for (auto& group : param_groups_) {
    const auto& options = static_cast<const LambOptions&>(group.options());
    const auto [beta1, beta2] = options.betas();
    const double eps = options.eps();
    for (auto& parameter : group.params()) {
      const auto& grad = parameter.grad();
      if (!grad.defined()) continue;
      MIXSEQ_CHECK(!grad.is_sparse(), "LAMB does not support sparse gradients");

      const auto key = compat::optimizer_state_key(state_, parameter);
      auto found = state_.find(key);
      if (found == state_.end()) {
        auto fresh = std::make_unique<LambParamState>();
        fresh->exp_avg(at::zeros_like(parameter, at::MemoryFormat::Preserve));
        fresh->exp_avg_sq(at::zeros_like(parameter, at::MemoryFormat::Preserve));
        found = state_.emplace(key, std::move(fresh)).first;
      }
      auto& state = static_cast<LambParamState&>(*found->second);
      auto& m = state.exp_avg();
      auto& v = state.exp_avg_sq();

      m.mul_(beta1).add_(grad, 1.0 - beta1);
      v.mul_(beta2).addcmul_(grad, grad, 1.0 - beta2);
      auto update = m / v.sqrt().add_(eps);
      if (options.weight_decay() != 0.0) update.add_(parameter, options.weight_decay());

      const auto weight_norm = parameter.norm().clamp(0.0, 10.0);  // [] stays on the device
      const auto update_norm = update.norm();
      const auto trust_ratio = at::where(weight_norm.gt(0.0).logical_and(update_norm.gt(0.0)),
                                         weight_norm / (update_norm + eps), at::ones_like(weight_norm));
      parameter.addcmul_(update, trust_ratio, -options.lr());
    }
  }
  return loss;
}

void Lamb::save(torch::serialize::OutputArchive& archive) const {
  torch::optim::serialize<LambParamState, LambOptions>(archive, *this);
}

void Lamb::load(torch::serialize::InputArchive& archive) {
  torch::optim::serialize<LambParamState, LambOptions>(archive, *this);
}

}  // namespace mixseq
