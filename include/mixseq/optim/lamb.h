// LAMB, layer-wise adaptive moments (You et al. 2020, "Large Batch Optimization for Deep
// Learning: Training BERT in 76 minutes", Algorithm 2), as NVIDIA's Transformer-XL trains with it
// (DeepLearningExamples, PyTorch/LanguageModeling/Transformer-XL/pytorch/lamb.py). For each
// parameter tensor w with gradient g:
//
//   m = β1·m + (1 - β1)·g              v = β2·v + (1 - β2)·g²       (no bias correction, as there)
//   u = m / (sqrt(v) + eps) + weight_decay·w                        (the Adam step, decay added)
//   r = min(||w||, 10) / (||u|| + eps), or 1 when ||w|| = 0 or ||u|| = 0   (the trust ratio)
//   w = w - lr · r · u
//
// The trust ratio makes each tensor's step proportional to its own norm, which is what lets
// LAMB train with very large batches. Clamping ||w|| at 10 is the paper's φ with γ_u = 10, as
// the reference. The trust ratio stays on the device: a step waits for nothing.
//
// Lamb is a torch::optim::Optimizer like LibTorch's Adam: zero_grad, param_groups, set_lr through
// the options, and torch::save(optimizer, path) / torch::load(optimizer, path) carry its moments
// (exp_avg = m, exp_avg_sq = v) over to an optimizer built over the same parameters. As for
// LibTorch's own optimizers, whether load also replaces the options depends on the LibTorch
// version (1.13 keeps those the optimizer was built with, 2.x takes the saved ones): build it
// from the same configuration. Sparse gradients are rejected.
#pragma once

#include <torch/arg.h>
#include <torch/optim/optimizer.h>

#include <tuple>
#include <vector>

namespace mixseq {

struct LambOptions : public torch::optim::OptimizerCloneableOptions<LambOptions> {
  LambOptions(double lr = 1e-3);  // implicit, as LibTorch's AdamOptions
  TORCH_ARG(double, lr) = 1e-3;    // step size before the trust ratio (reference default 1e-3)
  typedef std::tuple<double, double> betas_t;
  TORCH_ARG(betas_t, betas) = std::make_tuple(0.9, 0.999);  // decay rates of m and v
  TORCH_ARG(double, eps) = 1e-6;   // added to sqrt(v) and to ||u|| (the reference's default, not Adam's 1e-8)
  TORCH_ARG(double, weight_decay) = 0;  // times w, added to the Adam step (so decoupled from m and v); 0 disables

 public:
  void serialize(torch::serialize::InputArchive& archive) override;
  void serialize(torch::serialize::OutputArchive& archive) const override;
  double get_lr() const override;
  void set_lr(const double lr) override;
};

struct LambParamState : public torch::optim::OptimizerCloneableParamState<LambParamState> {
  TORCH_ARG(at::Tensor, exp_avg);     // m, shaped like the parameter
  TORCH_ARG(at::Tensor, exp_avg_sq);  // v, shaped like the parameter

 public:
  void serialize(torch::serialize::InputArchive& archive) override;
  void serialize(torch::serialize::OutputArchive& archive) const override;
};

class Lamb : public torch::optim::Optimizer {
 public:
  explicit Lamb(std::vector<at::Tensor> parameters, const LambOptions& defaults = {});

  at::Tensor step(LossClosure closure = nullptr) override;
  void save(torch::serialize::OutputArchive& archive) const override;
  void load(torch::serialize::InputArchive& archive) override;
};

}  // namespace mixseq
