// NovoGrad, stochastic gradient descent with layer-wise second moments (Ginsburg et al. 2019,
// "Stochastic Gradient Methods with Layer-wise Adaptive Moments for Training of Deep Networks",
// Algorithm 1), as NVIDIA's Jasper trains with it (DeepLearningExamples,
// PyTorch/SpeechRecognition/Jasper/common/optimizers.py, class Novograd). For each parameter tensor
// w with gradient g, where v is ONE number per tensor (not per element, as Adam's):
//
//   n = ||g||²                                        (sum of squares over the whole tensor)
//   v = n                 when v == 0 (the first step, or while every gradient so far was zero)
//   v = β2·v + (1 - β2)·n otherwise
//   v̂ = max(v̂, v) with amsgrad, else v̂ = v          (v̂ starts at 0)
//   u = g / (sqrt(v̂) + eps) + weight_decay·w         (decay added to the normalised gradient)
//   u = (1 - β1)·u        with grad_averaging
//   m = β1·m + u                                      (no bias correction, as there)
//   w = w - lr · m
//
// This is the reference's code line for line, including its test `v == 0` rather than a step
// count. Because u enters m, weight decay here has momentum, unlike LAMB's (lamb.h). Jasper's
// train.py keeps the class defaults betas (0.95, 0), so v is just the last ||g||², eps 1e-8,
// grad_averaging and amsgrad off, and passes weight_decay 1e-3. Two differences that change no
// update: the reference divides p.grad in place (here gradients are left as they are), and it
// keeps v and v̂ in float32 whatever the parameter's dtype (here they take the parameter's dtype:
// the same for mixseq's fp32 master weights). Everything stays on the device: a step waits for
// nothing.
//
// Novograd is a torch::optim::Optimizer like LibTorch's Adam: zero_grad, param_groups, set_lr
// through the options, and torch::save(optimizer, path) / torch::load(optimizer, path) carry its
// state (exp_avg = m, exp_avg_sq = v, max_exp_avg_sq = v̂ with amsgrad) over to an optimizer built
// over the same parameters. As for LibTorch's own optimizers, whether load also replaces the
// options depends on the LibTorch version (1.13 keeps those the optimizer was built with, 2.x takes
// the saved ones): build it from the same configuration. Sparse gradients are rejected.
#pragma once

#include <torch/arg.h>
#include <torch/optim/optimizer.h>

#include <tuple>
#include <vector>

namespace mixseq {

struct NovogradOptions : public torch::optim::OptimizerCloneableOptions<NovogradOptions> {
  NovogradOptions(double lr = 1e-3);  // implicit, as LibTorch's AdamOptions
  TORCH_ARG(double, lr) = 1e-3;       // step size (reference default 1e-3; Jasper's train.sh uses 1e-2)
  typedef std::tuple<double, double> betas_t;
  TORCH_ARG(betas_t, betas) = std::make_tuple(0.95, 0.0);  // β1 for m, β2 for v; β2 = 0 keeps only the last ||g||²
  TORCH_ARG(double, eps) = 1e-8;            // added to sqrt(v̂)
  TORCH_ARG(double, weight_decay) = 0;      // times w, added to the normalised gradient (so into m); 0 disables
  TORCH_ARG(bool, grad_averaging) = false;  // scale u by (1 - β1), making m an average; false = a plain sum
  TORCH_ARG(bool, amsgrad) = false;         // normalise by the largest v so far (Reddi et al. 2018)

 public:
  void serialize(torch::serialize::InputArchive& archive) override;
  void serialize(torch::serialize::OutputArchive& archive) const override;
  double get_lr() const override;
  void set_lr(const double lr) override;
};

struct NovogradParamState : public torch::optim::OptimizerCloneableParamState<NovogradParamState> {
  TORCH_ARG(at::Tensor, exp_avg);         // m, shaped like the parameter
  TORCH_ARG(at::Tensor, exp_avg_sq);      // v, one number: shape []
  TORCH_ARG(at::Tensor, max_exp_avg_sq);  // v̂, shape []; undefined until a step with amsgrad

 public:
  void serialize(torch::serialize::InputArchive& archive) override;
  void serialize(torch::serialize::OutputArchive& archive) const override;
};

class Novograd : public torch::optim::Optimizer {
 public:
  // Throws mixseq::Error for a negative lr, eps or weight_decay, or betas outside [0, 1).
  explicit Novograd(std::vector<at::Tensor> parameters, const NovogradOptions& defaults = {});

  at::Tensor step(LossClosure closure = nullptr) override;
  void save(torch::serialize::OutputArchive& archive) const override;
  void load(torch::serialize::InputArchive& archive) override;
};

}  // namespace mixseq
