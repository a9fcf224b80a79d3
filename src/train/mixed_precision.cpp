#include "mixseq/train/mixed_precision.h"

#include <ATen/Context.h>
#include <torch/cuda.h>

#include "mixseq/util/error.h"
#include "util/torch_compat.h"

namespace mixseq {

Precision parse_precision(const std::string& name) {
  if (name == "fp32") return Precision::kFp32;
  if (name == "tf32") return Precision::kTf32;
  if (name == "bf16") return Precision::kBf16;
  if (name == "fp16") return Precision::kFp16;
  throw Error(str_cat("unknown precision '", name, "'; known: fp32, tf32, bf16, fp16"));
}

std::string precision_name(Precision precision) {
  switch (precision) {
    case Precision::kFp32: return "fp32";
    case Precision::kTf32: return "tf32";
    case Precision::kBf16: return "bf16";
    case Precision::kFp16: return "fp16";
  }
  return "?";
}

torch::Device resolve_device(const std::string& name) {
  if (name == "auto") return torch::cuda::is_available() ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
  try {
    const torch::Device device(name);
    MIXSEQ_CHECK(device.is_cpu() || torch::cuda::is_available(), "device '", name,
                 "' asked for, but this LibTorch sees no CUDA device; use --train.device cpu");
    return device;
  } catch (const c10::Error&) {
    throw Error(str_cat("unknown device '", name, "'; use auto, cpu, cuda or cuda:N"));
  }
}

void configure_precision(Precision precision, const torch::Device& device) {
  MIXSEQ_CHECK(device.is_cuda() || (precision != Precision::kFp16 && precision != Precision::kTf32), "precision ",
               precision_name(precision), " needs a CUDA device; on CPU use fp32 or bf16");
  const bool tf32 = precision == Precision::kTf32;
  at::globalContext().setFloat32MatmulPrecision(tf32 ? "high" : "highest");
  at::globalContext().setAllowTF32CuDNN(tf32);
}

namespace {
at::ScalarType autocast_dtype(Precision precision) {
  return precision == Precision::kFp16 ? at::kHalf : at::kBFloat16;
}
}  // namespace

AutocastScope::AutocastScope(Precision precision, const torch::Device& device)
    : device_type_(device.type()),
      was_enabled_(compat::is_autocast_enabled(device_type_)),
      enabled_(precision == Precision::kBf16 || precision == Precision::kFp16) {
  if (enabled_) compat::set_autocast(device_type_, true, autocast_dtype(precision));
}

AutocastScope::~AutocastScope() {
  if (!enabled_) return;
  compat::set_autocast(device_type_, was_enabled_, at::kBFloat16);
  // Casts cached for this forward pass must not outlive it (weights change at every step).
  if (!was_enabled_) at::autocast::clear_cache();
}

}  // namespace mixseq
