// Precision modes for training and decoding.
//
//   fp32  plain single precision.
//   tf32  fp32 tensors, matrix products in TensorFloat-32 on Ampere and later GPUs.
//   bf16  autocast to bfloat16 (CPU and GPU): parameters, gradients and optimizer state stay
//         fp32; products and convolutions run in bf16. Same exponent range as fp32, so no
//         loss scaling.
//   fp16  autocast to float16 (GPU): as bf16, plus dynamic loss scaling (optim/loss_scaler.h),
//         since fp16 gradients underflow (Micikevicius et al. 2018, "Mixed Precision Training").
//
// Parameters are never stored in half precision: the fp32 parameters are the master weights.
#pragma once

#include <torch/types.h>

#include <string>

namespace mixseq {

enum class Precision { kFp32, kTf32, kBf16, kFp16 };

Precision parse_precision(const std::string& name);  // throws listing "fp32, tf32, bf16, fp16"
std::string precision_name(Precision precision);

// "auto" (CUDA when available, else CPU), "cpu", "cuda" or "cuda:N".
torch::Device resolve_device(const std::string& name);

// Checks that `device` supports `precision` (fp16 and tf32 need CUDA) and sets the process-wide
// TF32 switches to match.
void configure_precision(Precision precision, const torch::Device& device);

// While alive, autocast is on for bf16/fp16 on the device's type and off otherwise; the previous
// state comes back on destruction. Create one around forward passes, never around backward.
class AutocastScope {
 public:
  AutocastScope(Precision precision, const torch::Device& device);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  c10::DeviceType device_type_;
  bool was_enabled_;
  bool enabled_;
};

}  // namespace mixseq
