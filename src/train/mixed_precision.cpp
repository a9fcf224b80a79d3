#include "mixseq/train/mixed_precision.h"

#include <ATen/Context.h>
#include <torch/cuda.h>

#include <fstream>
#include <string>

#include "mixseq/util/error.h"
#include "mixseq/util/log.h"
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

namespace {

// False only when /proc/cpuinfo lists x86 flags without AMX-BF16 and AVX512-BF16: there bf16
// products are emulated through fp32 and run at about a third of fp32's speed.
bool cpu_may_have_native_bf16() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    line += ' ';
    return line.find(" amx_bf16 ") != std::string::npos || line.find(" avx512_bf16 ") != std::string::npos;
  }
  return true;
}

}  // namespace

void configure_precision(Precision precision, const torch::Device& device) {
  MIXSEQ_CHECK(device.is_cuda() || (precision != Precision::kFp16 && precision != Precision::kTf32), "precision ",
               precision_name(precision), " needs a CUDA device; on CPU use fp32 or bf16");
  if (precision == Precision::kBf16 && device.is_cpu() && !cpu_may_have_native_bf16())
    log_info("warning: this CPU has neither AMX nor AVX512-BF16; bf16 runs slower than fp32 here");
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
