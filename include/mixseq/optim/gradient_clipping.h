// Gradient clipping by global L2 norm (Pascanu et al. 2013, "On the difficulty of training
// recurrent neural networks", §3.2): when the L2 norm of all gradients taken together exceeds
// max_norm, every gradient is multiplied by max_norm / norm, which shortens the update and keeps
// its direction. NVIDIA's GNMT clips at 5 (train.py --grad-clip 5.0), Transformer-XL at 0.25.
//
// Clip the true gradients: after the all-reduce across ranks and after
// DynamicLossScaler::unscale_, before the optimizer step (loss_scaler.h shows the order). The
// arithmetic is PyTorch's: factor max_norm / (norm + 1e-6), applied only when below 1. fp32
// gradients on the CPU take two passes of mixseq's own (the squares summed in fp64 per block);
// others LibTorch's torch::nn::utils::clip_grad_norm_.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "mixseq/util/config.h"

namespace mixseq {

struct GradientClippingOptions {
  double max_norm = 5.0;  // largest global L2 norm of the gradients (NVIDIA GNMT --grad-clip 5.0);
                          // 0 = no clipping, the norm is still measured

  void visit(ConfigVisitor& v) {
    v.field("max_norm", max_norm, "clip gradients to this global L2 norm; 0 = no clipping");
  }
};

// Clips the gradients of `parameters` in place and returns their global L2 norm before clipping,
// for the training log (inf or NaN when a gradient holds one). Parameters without a gradient are
// ignored; with none at all the norm is 0. Waits for the device: the norm comes back to the host.
double clip_gradient_norm(const std::vector<at::Tensor>& parameters, const GradientClippingOptions& options);

}  // namespace mixseq
