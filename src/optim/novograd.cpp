#include "mixseq/optim/novograd.h"

#include <ATen/ATen.h>
#include <torch/optim/serialize.h>
#include <torch/serialize/archive.h>

#include <memory>

#include "mixseq/util/error.h"
#include "optim/closure_loss.h"
#include "util/torch_compat.h"

namespace mixseq {

NovogradOptions::NovogradOptions(double lr) : lr_(lr) {}

void NovogradOptions::serialize(torch::serialize::OutputArchive& archive) const {
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(lr);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(betas);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(eps);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(weight_decay);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(grad_averaging);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(amsgrad);
}

void NovogradOptions::serialize(torch::serialize::InputArchive& archive) {
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, lr);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(betas_t, betas);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, eps);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, weight_decay);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(bool, grad_averaging);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(bool, amsgrad);
}

double NovogradOptions::get_lr() const { return lr(); }

void NovogradOptions::set_lr(const double lr) { this->lr(lr); }

void NovogradParamState::serialize(torch::serialize::OutputArchive& archive) const {
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(exp_avg);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(exp_avg_sq);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(max_exp_avg_sq);  // skipped while undefined (amsgrad off)
}

void NovogradParamState::serialize(torch::serialize::InputArchive& archive) {
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(at::Tensor, exp_avg);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(at::Tensor, exp_avg_sq);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(at::Tensor, max_exp_avg_sq);
}

Novograd::Novograd(std::vector<at::Tensor> parameters, const NovogradOptions& defaults)
    : torch::optim::Optimizer({torch::optim::OptimizerParamGroup(std::move(parameters))},
                              std::make_unique<NovogradOptions>(defaults)) {
  const auto [beta1, beta2] = defaults.betas();
  MIXSEQ_CHECK(defaults.lr() >= 0.0 && defaults.eps() >= 0.0 && defaults.weight_decay() >= 0.0, "NovoGrad: lr (",
               defaults.lr(), "), eps (", defaults.eps(), ") and weight_decay (", defaults.weight_decay(),
               ") must not be negative");
  MIXSEQ_CHECK(beta1 >= 0.0 && beta1 < 1.0 && beta2 >= 0.0 && beta2 < 1.0, "NovoGrad: betas (", beta1, ", ", beta2,
               ") must lie in [0, 1)");
}

// DeepLearningExamples Jasper common/optimizers.py, Novograd.step, statement by statement.
at::Tensor Novograd::step(LossClosure closure) {
  at::NoGradGuard no_grad;
  const auto loss = closure_loss(closure);
  for (auto& group : param_groups_) {
    const auto& options = static_cast<const NovogradOptions&>(group.options());
    const auto [beta1, beta2] = options.betas();
    for (auto& parameter : group.params()) {
      const auto& grad = parameter.grad();
      if (!grad.defined()) continue;
      MIXSEQ_CHECK(!grad.is_sparse(), "NovoGrad does not support sparse gradients");

      const auto key = compat::optimizer_state_key(state_, parameter);
      auto found = state_.find(key);
      if (found == state_.end()) {
        auto fresh = std::make_unique<NovogradParamState>();
        fresh->exp_avg(at::zeros_like(parameter, at::MemoryFormat::Preserve));
        fresh->exp_avg_sq(at::zeros({}, parameter.options()));
        found = state_.emplace(key, std::move(fresh)).first;
      }
      auto& state = static_cast<NovogradParamState&>(*found->second);
      auto& m = state.exp_avg();
      auto& v = state.exp_avg_sq();

      const auto norm = grad.pow(2).sum();  // [] ||g||², one per tensor
      // The reference's `if exp_avg_sq == 0: copy_(norm) else: mul_(β2).add_(norm, 1 - β2)`,
      // without reading v back to the host.
      const auto decayed = v.mul(beta2).add_(norm, 1.0 - beta2);
      v.copy_(at::where(v.eq(0.0), norm, decayed));

      at::Tensor denom;
      if (options.amsgrad()) {
        // Created at the first amsgrad step, also when resuming a state saved with amsgrad off.
        if (!state.max_exp_avg_sq().defined()) state.max_exp_avg_sq(at::zeros({}, parameter.options()));
        auto& max_v = state.max_exp_avg_sq();
        max_v.copy_(at::maximum(max_v, v));
        denom = max_v.sqrt().add_(options.eps());
      } else {
        denom = v.sqrt().add_(options.eps());
      }

      auto update = grad / denom;  // the reference's grad.div_(denom), leaving p.grad as it is
      if (options.weight_decay() != 0.0) update.add_(parameter, options.weight_decay());
      if (options.grad_averaging()) update.mul_(1.0 - beta1);
      m.mul_(beta1).add_(update);

      parameter.add_(m, -options.lr());
    }
  }
  return loss;
}

void Novograd::save(torch::serialize::OutputArchive& archive) const {
  torch::optim::serialize<NovogradParamState, NovogradOptions>(archive, *this);
}

void Novograd::load(torch::serialize::InputArchive& archive) {
  compat::keeping_param_group_options(
      *this, [&] { torch::optim::serialize<NovogradParamState, NovogradOptions>(archive, *this); });
}

}  // namespace mixseq
