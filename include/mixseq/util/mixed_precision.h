// Precision modes for training and decoding.
//
//   auto  bf16 where the device computes it natively (AMX or AVX512-BF16 CPUs through oneDNN;
//         GPUs of compute capability 8+), fp32 elsewhere; the choice is logged.
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

#include <istream>
#include <string>
#include <vector>

namespace mixseq {

enum class Precision { kFp32, kTf32, kBf16, kFp16 };

// The names a user may give: "auto", then each Precision's (the one table of them).
const std::vector<std::string>& precision_choices();
Precision parse_precision(const std::string& name);  // fp32 | tf32 | bf16 | fp16; throws listing the names
// As parse_precision, and "auto" picks bf16 where `device` computes it natively, else fp32.
Precision resolve_precision(const std::string& name, const torch::Device& device);
// bf16 products run on bf16 hardware (AMX, AVX512-BF16, bf16 tensor cores) rather than emulated.
bool computes_bf16_natively(const torch::Device& device);
// Whether /proc/cpuinfo's x86 flags name AMX-BF16 or AVX512-BF16. Without them bf16 products are
// emulated through fp32: 3x (Intel AVX-512) to 28x (AMD AVX2) slower than fp32.
bool cpuinfo_lists_bf16(std::istream& cpuinfo);
std::string precision_name(Precision precision);

// "auto" (CUDA when available, else CPU), "cpu", "cuda" or "cuda:N". Errors name `option`, the
// flag or config key the name came from ("--device", "--train.device"), and say how to fix it.
torch::Device resolve_device(const std::string& name, const std::string& option);

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
