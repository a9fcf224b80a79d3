// What the optimizers' fused steps (optim/fused_adam.cpp, optim/nag.cpp) share: which tensors
// their one-pass loops take, and how a weight written through its data says so.
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/autograd/variable.h>

namespace mixseq {

// Whether a fused loop may walk t as one dense fp32 array on the CPU.
inline bool dense_fp32_cpu(const at::Tensor& t) {
  return t.device().is_cpu() && !t.is_sparse() && t.scalar_type() == at::kFloat && t.is_contiguous();
}

// After a loop wrote `parameter` through its data, as an in-place op would write it: its version
// counter moves, so that copies kept while it is unchanged (TransposedWeight, LstmPanelCache;
// util/tensor_identity.h) see the change.
inline void mark_written(const at::Tensor& parameter) { torch::autograd::impl::bump_version(parameter); }

}  // namespace mixseq
