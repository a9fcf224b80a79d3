// Nag: fairseq's NAG optimizer (fairseq/optim/nag.py), Nesterov's accelerated gradient in the
// form Sutskever et al. 2013 give it, with which fairseq trains ConvS2S (Gehring et al. 2017:
// momentum 0.99, lr 0.25 on IWSLT, 0.5 on WMT). For each parameter p with gradient g and
// momentum buffer b (zeros at first), at learning rate lr (and lr_old, the previous step's):
//
//   c = lr / lr_old               (rescales the buffer when the schedule changes lr)
//   p <- p (1 - lr weight_decay)  (only with weight_decay)
//   p <- p + momentum^2 c b - (1 + momentum) lr g
//   b <- momentum c b - lr g
//
// statement by statement as the reference (dense fp32 CPU parameters take the four in one pass
// over p, b and g, in that order). Its lr_old is kept per group; here per parameter, in the
// state that checkpoints carry (LibTorch 1.13's optimizer load does not restore a group's options).
#pragma once

#include <torch/arg.h>
#include <torch/optim/optimizer.h>

#include <vector>

namespace mixseq {

struct NagOptions : public torch::optim::OptimizerCloneableOptions<NagOptions> {
  NagOptions(double lr = 0.25);          // implicit, as LibTorch's AdamOptions
  TORCH_ARG(double, lr) = 0.25;          // step size (fairseq's IWSLT ConvS2S: 0.25)
  TORCH_ARG(double, momentum) = 0.99;    // fairseq's --momentum default
  TORCH_ARG(double, weight_decay) = 0;   // p shrinks by lr * weight_decay before the step; 0 disables

 public:
  void serialize(torch::serialize::InputArchive& archive) override;
  void serialize(torch::serialize::OutputArchive& archive) const override;
  double get_lr() const override;
  void set_lr(const double lr) override;
};

struct NagParamState : public torch::optim::OptimizerCloneableParamState<NagParamState> {
  TORCH_ARG(at::Tensor, momentum_buffer);  // b, shaped like the parameter
  TORCH_ARG(double, lr_old) = -1;          // the lr of this parameter's previous step; -1 = none yet

 public:
  void serialize(torch::serialize::InputArchive& archive) override;
  void serialize(torch::serialize::OutputArchive& archive) const override;
};

class Nag : public torch::optim::Optimizer {
 public:
  // Throws mixseq::Error for a negative lr, momentum or weight_decay.
  explicit Nag(std::vector<at::Tensor> parameters, const NagOptions& defaults = {});

  at::Tensor step(LossClosure closure = nullptr) override;
  void save(torch::serialize::OutputArchive& archive) const override;
  void load(torch::serialize::InputArchive& archive) override;
};

}  // namespace mixseq
