#include "mixseq/optim/optimizer.h"

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include <functional>
#include <map>
#include <tuple>

#include "mixseq/optim/fused_adam.h"
#include "mixseq/optim/lamb.h"
#include "mixseq/optim/nag.h"
#include "mixseq/optim/novograd.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

using OptimizerBuilder =
    std::function<std::unique_ptr<torch::optim::Optimizer>(const OptimizerOptions&, std::vector<at::Tensor>)>;

std::tuple<double, double> betas_of(const OptimizerOptions& options) {
  MIXSEQ_CHECK(options.betas.size() == 2, "optimizer ", options.name, " needs two betas (beta1, beta2); got ",
               options.betas.size());
  for (const double beta : options.betas) {
    MIXSEQ_CHECK(beta >= 0.0 && beta < 1.0, "optimizer ", options.name, ": betas must lie in [0, 1); got ", beta);
  }
  return {options.betas[0], options.betas[1]};
}

// The only place that names every optimizer.
const std::map<std::string, OptimizerBuilder> kOptimizerBuilders = {
    {"adam",
     [](const OptimizerOptions& o, std::vector<at::Tensor> parameters) -> std::unique_ptr<torch::optim::Optimizer> {
       const auto options =
           torch::optim::AdamOptions(o.lr).betas(betas_of(o)).eps(o.eps).weight_decay(o.weight_decay).amsgrad(false);
       return std::make_unique<FusedAdam>(std::move(parameters), options);
     }},
    {"adamw",
     [](const OptimizerOptions& o, std::vector<at::Tensor> parameters) -> std::unique_ptr<torch::optim::Optimizer> {
       const auto options =
           torch::optim::AdamWOptions(o.lr).betas(betas_of(o)).eps(o.eps).weight_decay(o.weight_decay).amsgrad(false);
       return std::make_unique<torch::optim::AdamW>(std::move(parameters), options);
     }},
    {"lamb",
     [](const OptimizerOptions& o, std::vector<at::Tensor> parameters) -> std::unique_ptr<torch::optim::Optimizer> {
       const auto options = LambOptions(o.lr).betas(betas_of(o)).eps(o.eps).weight_decay(o.weight_decay);
       return std::make_unique<Lamb>(std::move(parameters), options);
     }},
    {"nag",
     [](const OptimizerOptions& o, std::vector<at::Tensor> parameters) -> std::unique_ptr<torch::optim::Optimizer> {
       MIXSEQ_CHECK(o.momentum >= 0.0 && o.momentum < 1.0, "optim.momentum (", o.momentum,
                    ") must be in [0, 1) for nag; fairseq's default is 0.99");
       return std::make_unique<Nag>(std::move(parameters),
                                    NagOptions(o.lr).momentum(o.momentum).weight_decay(o.weight_decay));
     }},
    {"novograd",
     [](const OptimizerOptions& o, std::vector<at::Tensor> parameters) -> std::unique_ptr<torch::optim::Optimizer> {
       const auto options = NovogradOptions(o.lr)
                                .betas(betas_of(o))
                                .eps(o.eps)
                                .weight_decay(o.weight_decay)
                                .grad_averaging(o.grad_averaging)
                                .amsgrad(o.amsgrad);
       return std::make_unique<Novograd>(std::move(parameters), options);
     }},
    {"sgd",
     [](const OptimizerOptions& o, std::vector<at::Tensor> parameters) -> std::unique_ptr<torch::optim::Optimizer> {
       MIXSEQ_CHECK(o.momentum >= 0.0, "sgd momentum (", o.momentum, ") must not be negative");
       MIXSEQ_CHECK(!o.nesterov || o.momentum > 0.0, "optim.nesterov needs optim.momentum above 0, not ", o.momentum);
       const auto options =
           torch::optim::SGDOptions(o.lr).momentum(o.momentum).nesterov(o.nesterov).weight_decay(o.weight_decay);
       return std::make_unique<torch::optim::SGD>(std::move(parameters), options);
     }},
};

}  // namespace

const std::vector<std::string>& optimizer_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> sorted;
    for (const auto& entry : kOptimizerBuilders) sorted.push_back(entry.first);
    return sorted;
  }();
  return names;
}

std::unique_ptr<torch::optim::Optimizer> build_optimizer(const OptimizerOptions& options,
                                                         std::vector<ParameterGroup> groups) {
  MIXSEQ_CHECK(!groups.empty(), "optimizer: no parameter group");
  for (const auto& group : groups)
    MIXSEQ_CHECK(!group.parameters.empty() && group.lr_scale > 0, "optimizer: every parameter group needs parameters "
                 "and a positive learning-rate scale (got ", group.parameters.size(), " parameters, scale ",
                 group.lr_scale, ")");
  auto optimizer = build_optimizer(options, std::move(groups.front().parameters));
  for (size_t g = 1; g < groups.size(); ++g)  // each with a copy of the defaults (LibTorch's add_param_group)
    optimizer->add_param_group(torch::optim::OptimizerParamGroup(std::move(groups[g].parameters)));
  return optimizer;
}

std::unique_ptr<torch::optim::Optimizer> build_optimizer(const OptimizerOptions& options,
                                                         std::vector<at::Tensor> parameters) {
  const auto builder = kOptimizerBuilders.find(options.name);
  if (builder == kOptimizerBuilders.end()) {
    std::string known;
    for (const auto& name : optimizer_names()) known += (known.empty() ? "" : ", ") + name;
    throw Error(str_cat("unknown optimizer '", options.name, "'; known: ", known));
  }
  MIXSEQ_CHECK(options.lr >= 0.0 && options.eps >= 0.0 && options.weight_decay >= 0.0, "optimizer: lr (", options.lr,
               "), eps (", options.eps, ") and weight_decay (", options.weight_decay, ") must not be negative");
  MIXSEQ_CHECK(options.name == "novograd" || (!options.grad_averaging && !options.amsgrad),
               "optim.grad_averaging and optim.amsgrad are novograd's; optim.name is '", options.name,
               "': remove them, or set optim.name novograd");
  return builder->second(options, std::move(parameters));
}

}  // namespace mixseq
