// LibTorch's Adam (torch::optim::Adam, Kingma and Ba 2015, Algorithm 1 with L2 weight decay
// added to the gradient) with its step in one pass over each parameter on the CPU:
//
//   g = grad + weight_decay·w      m = β1·m + (1 - β1)·g      v = β2·v + (1 - β2)·g²
//   w = w - (lr / (1 - β1^t)) · m / (sqrt(v) / sqrt(1 - β2^t) + eps)
//
// LibTorch's step is seven element-wise ops per parameter tensor, each a pass over memory: 20-25
// ms of a 170 ms bf16 GNMT training step at the bench shape (one thread). Here one loop, compiled
// for the CPU it runs on (util/vector_clones.h), reads w, grad, m and v once and writes w, m and
// v once, with LibTorch's operations in its order; results agree with its step to float rounding
// (multiply-adds may be fused differently), and each weight's version counter moves as LibTorch's
// in-place ops would move it (copies kept of a weight, nn/cpu_float_linear.h's TransposedWeight,
// see the change). It is a torch::optim::Adam: the same options, state
// (AdamParamState) and checkpoints. Parameters that are not dense fp32 CPU tensors, and amsgrad,
// take LibTorch's step.
#pragma once

#include <torch/optim/adam.h>

#include <vector>

namespace mixseq {

class FusedAdam : public torch::optim::Adam {
 public:
  explicit FusedAdam(std::vector<at::Tensor> parameters, const torch::optim::AdamOptions& defaults = {});

  at::Tensor step(LossClosure closure = nullptr) override;
};

}  // namespace mixseq
