// UpdateStep: one optimizer update over one or more micro-batches (gradient accumulation), for
// any task: the training loops and `mixseq bench train` share it.
//   For each micro-batch the caller's forward_loss runs the forward pass (under autocast) and
//   returns the summed loss of its targets; UpdateStep divides it by the targets of the whole
//   update and runs backward (scaled for fp16). Then it unscales the gradients, skips the update
//   if they overflowed (fp16), clips the fp32 gradients, steps the optimizer, zeroes the gradients.
// What a task knows (its batches, its model's forward, its criterion) stays in its callable, e.g.
// train/translation_loss.h; UpdateStep knows only the parameters, the optimizer and the
// precision. The caller sets the learning rate first. In a data-parallel job a GradientReducer
// sums the gradients of all ranks during the last micro-batch's backward, so every rank takes
// the same step.
#pragma once

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "mixseq/distributed/gradient_reducer.h"
#include "mixseq/optim/gradient_clipping.h"
#include "mixseq/optim/loss_scaler.h"
#include "mixseq/util/mixed_precision.h"

namespace mixseq {

// What forward_loss returns for one micro-batch.
struct LossSums {
  torch::Tensor loss;         // [] summed training loss over the targets, with its graph: backpropagated
  torch::Tensor nll;          // [] summed negative log-likelihood of the same targets, no gradient
  int64_t target_tokens = 0;  // the targets summed over
  int64_t source_tokens = 0;  // other tokens read (translation sources), counted for throughput only
};

struct UpdateResult {
  torch::Tensor loss;     // [] summed loss over the update's targets (on the device)
  torch::Tensor nll;      // [] summed negative log-likelihood
  int64_t source_tokens = 0;
  int64_t target_tokens = 0;
  bool skipped = false;   // fp16 gradients overflowed: no step was taken, the loss scale halved
  double grad_norm = 0;   // global L2 norm of the (unscaled) gradients before clipping; 0 when skipped
};

class UpdateStep {
 public:
  // Runs the forward pass and loss of micro-batch `micro` (0 .. micro_batches - 1).
  using ForwardLoss = std::function<LossSums(int64_t micro)>;

  UpdateStep(torch::nn::Module& model, torch::optim::Optimizer& optimizer, const GradientClippingOptions& clipping,
             const LossScalerOptions& loss_scaler, Precision precision, const torch::Device& device);

  // `update_tokens`: the targets of the whole update, over all ranks (the loss is per target of
  // the update, whatever the micro-batch and the rank); at least 1.
  UpdateResult run(int64_t micro_batches, const ForwardLoss& forward_loss, int64_t update_tokens);

  // Data-parallel training: `reducer` (or nullptr) sums the gradients over the ranks.
  void set_gradient_reducer(GradientReducer* reducer) { reducer_ = reducer; }

  bool scaling() const { return precision_ == Precision::kFp16; }
  DynamicLossScaler& loss_scaler() { return scaler_; }

 private:
  torch::optim::Optimizer& optimizer_;
  GradientClippingOptions clipping_;
  DynamicLossScaler scaler_;
  Precision precision_;
  torch::Device device_;
  std::vector<torch::Tensor> parameters_;
  GradientReducer* reducer_ = nullptr;
};

}  // namespace mixseq
