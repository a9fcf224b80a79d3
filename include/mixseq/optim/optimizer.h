// Optimizers by name, built from OptimizerOptions (the optimizer section of a training config):
//
//   adam  LibTorch's torch::optim::Adam, the algorithm of torch.optim.Adam that NVIDIA's GNMT
//         trains with (Kingma & Ba 2015, Algorithm 1, with bias correction). weight_decay is an L2
//         penalty added to the gradient before the moments, as in torch.optim.Adam (not AdamW's
//         decoupled decay); amsgrad is off.
//   adamw LibTorch's torch::optim::AdamW (Loshchilov & Hutter 2019): weight decay decoupled from
//         the moments, p -= lr * weight_decay * p before the Adam step, which is what fairseq's
//         `--optimizer adam --weight-decay` does (the IWSLT recipe).
//   lamb  mixseq::Lamb (lamb.h), Transformer-XL's; weight_decay is added to the Adam step.
//   novograd  mixseq::Novograd (novograd.h), Jasper's (Ginsburg et al. 2019): one second moment per
//         parameter tensor (||g||²), the gradient normalised by it, weight_decay added to the
//         normalised gradient before the momentum; reads betas, eps, weight_decay, grad_averaging,
//         amsgrad. Jasper's betas are (0.95, 0), not the (0.9, 0.999) default here: set them
//         (configs/bench/jasper.yaml does).
//   nag   mixseq::Nag (nag.h), fairseq's NAG, with which fairseq trains ConvS2S; reads momentum (set
//         fairseq's 0.99) and weight_decay (p shrinks by lr * weight_decay before each step).
//   sgd   LibTorch's torch::optim::SGD: momentum without dampening, Nesterov's with `nesterov` (as
//         MLPerf's DeepSpeech2 trains), weight_decay as L2.
//
// `lr` is the peak learning rate; LrSchedule (lr_schedule.h) sets the rate of every update.
// The optimizer holds the parameters it is given (shared tensors, not copies).
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <string>
#include <vector>

#include "mixseq/util/config.h"

namespace torch::optim {
class Optimizer;
}

namespace mixseq {

// The names build_optimizer knows, sorted: the choices of optim.name.
const std::vector<std::string>& optimizer_names();

struct OptimizerOptions {
  std::string name = "adam";                 // adam | adamw | lamb | nag | novograd | sgd
  double lr = 2e-3;                          // peak learning rate (NVIDIA GNMT --lr 2.00e-3)
  std::vector<double> betas = {0.9, 0.999};  // all but sgd: decay rates of the first and second moments
                                             // (Jasper's NovoGrad: 0.95, 0)
  double eps = 1e-8;                         // all but sgd: added to sqrt(v) (NVIDIA's LAMB uses 1e-6)
  double weight_decay = 0;                   // see above for how each optimizer applies it; 0 disables
  double momentum = 0;                       // sgd and nag (fairseq: 0.99); 0 = plain SGD
  bool nesterov = false;                     // sgd only: Nesterov momentum (needs momentum > 0)
  bool grad_averaging = false;               // novograd only: m averages (1 - beta1)-scaled steps; false = Jasper's
  bool amsgrad = false;                      // novograd only: normalise by the largest second moment so far

  void visit(ConfigVisitor& v) {
    v.choice("name", name, optimizer_names(), "optimizer");
    v.field("lr", lr, "peak learning rate");
    v.field("betas", betas, "adam, adamw, lamb, novograd: moment decay rates beta1, beta2");
    v.field("eps", eps, "adam, adamw, lamb, novograd: added to sqrt(v)");
    v.field("weight_decay", weight_decay, "weight decay; 0 disables");
    v.field("momentum", momentum, "sgd and nag: momentum (fairseq's nag: 0.99); 0 = plain SGD");
    v.field("nesterov", nesterov, "sgd only: Nesterov momentum (needs momentum > 0)");
    v.field("grad_averaging", grad_averaging, "novograd only: scale each step by (1 - beta1) before the momentum");
    v.field("amsgrad", amsgrad, "novograd only: normalise by the largest second moment so far (AMSGrad)");
  }
};

// Throws mixseq::Error for an unknown name (listing the known ones) or invalid options.
std::unique_ptr<torch::optim::Optimizer> build_optimizer(const OptimizerOptions& options,
                                                         std::vector<at::Tensor> parameters);

// Parameters that learn at their own share of the schedule's rate (ULMFiT's discriminative
// fine-tuning: lower layers slower): set_learning_rate (optim/lr_schedule.h) gives group i
// lr * lr_scale of it.
struct ParameterGroup {
  std::vector<at::Tensor> parameters;
  double lr_scale = 1.0;  // > 0; 1 = the schedule's rate
};
// The optimizer's param_groups() are `groups`, in order (each with the options above). Throws as
// above, and for an empty group or a scale that is not positive.
std::unique_ptr<torch::optim::Optimizer> build_optimizer(const OptimizerOptions& options,
                                                         std::vector<ParameterGroup> groups);

}  // namespace mixseq
