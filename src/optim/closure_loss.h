// The first thing an optimizer's step(closure) does, as LibTorch's own optimizers do it.
#pragma once

#include <ATen/core/grad_mode.h>
#include <torch/optim/optimizer.h>

namespace mixseq {

// The closure's loss, computed with gradients enabled (it runs backward); undefined without one.
inline at::Tensor closure_loss(const torch::optim::Optimizer::LossClosure& closure) {
  if (!closure) return at::Tensor();
  at::AutoGradMode enable_grad(true);
  return closure();
}

}  // namespace mixseq
