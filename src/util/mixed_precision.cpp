#include "mixseq/util/mixed_precision.h"

#include <ATen/Context.h>
#include <torch/cuda.h>
#ifdef MIXSEQ_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#endif

#include <fstream>
#include <optional>
#include <string>

#include "mixseq/util/error.h"
#include "mixseq/util/log.h"
#include "util/torch_compat.h"

namespace mixseq {

namespace {

// Ampere (compute capability 8) and later GPUs have bf16 tensor cores.
bool gpu_computes_bf16(const torch::Device& device) {
#ifdef MIXSEQ_WITH_CUDA
  return at::cuda::getDeviceProperties(device.index() < 0 ? 0 : device.index())->major >= 8;
#else
  return false;
#endif
}

bool cpu_flags_compute_bf16() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  return cpuinfo_lists_bf16(cpuinfo);
}

}  // namespace

bool cpuinfo_lists_bf16(std::istream& cpuinfo) {
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    line += ' ';
    return line.find(" amx_bf16 ") != std::string::npos || line.find(" avx512_bf16 ") != std::string::npos;
  }
  return false;
}

bool computes_bf16_natively(const torch::Device& device) {
  // LibTorch reaches AMX and AVX512-BF16 only through oneDNN (MKLDNN).
  return device.is_cuda() ? gpu_computes_bf16(device) : at::hasMKLDNN() && cpu_flags_compute_bf16();
}

Precision resolve_precision(const std::string& name, const torch::Device& device) {
  if (name != "auto") return parse_precision(name);
  const auto precision = computes_bf16_natively(device) ? Precision::kBf16 : Precision::kFp32;
  log_info("precision auto: ", precision_name(precision), " on ", device.str(),
           precision == Precision::kBf16 ? " (computes bf16 natively)" : " (no native bf16 here)");
  return precision;
}

namespace {

struct NamedPrecision {
  const char* name;
  Precision precision;
};
constexpr NamedPrecision kPrecisionNames[] = {
    {"fp32", Precision::kFp32}, {"tf32", Precision::kTf32}, {"bf16", Precision::kBf16}, {"fp16", Precision::kFp16}};

}  // namespace

const std::vector<std::string>& precision_choices() {
  static const std::vector<std::string> choices = [] {
    std::vector<std::string> names = {"auto"};
    for (const auto& entry : kPrecisionNames) names.emplace_back(entry.name);
    return names;
  }();
  return choices;
}

Precision parse_precision(const std::string& name) {
  for (const auto& entry : kPrecisionNames)
    if (name == entry.name) return entry.precision;
  std::string known;
  for (const auto& choice : precision_choices()) known += (known.empty() ? "" : ", ") + choice;
  throw Error(str_cat("unknown precision '", name, "'; known: ", known));
}

std::string precision_name(Precision precision) {
  for (const auto& entry : kPrecisionNames)
    if (precision == entry.precision) return entry.name;
  return "?";
}

torch::Device resolve_device(const std::string& name, const std::string& option) {
  if (name == "auto") return torch::cuda::is_available() ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
  std::optional<torch::Device> device;
  try {
    device.emplace(name);
  } catch (const c10::Error&) {
    throw Error(str_cat(option, " '", name, "' is not a device; use auto, cpu, cuda or cuda:N"));
  }
  MIXSEQ_CHECK(device->is_cpu() || torch::cuda::is_available(), option, " ", name,
               " asked for, but this LibTorch sees no CUDA device; use ", option, " cpu");
  return *device;
}


void configure_precision(Precision precision, const torch::Device& device) {
  MIXSEQ_CHECK(device.is_cuda() || (precision != Precision::kFp16 && precision != Precision::kTf32), "precision ",
               precision_name(precision), " needs a CUDA device; on CPU use fp32 or bf16");
  if (precision == Precision::kBf16 && !computes_bf16_natively(device))
    log_info("warning: ", device.str(), " does not compute bf16 natively (CPUs: AMX or AVX512-BF16; GPUs: compute "
             "capability 8+); bf16 runs slower than fp32 here, precision auto would pick fp32");
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
  if (enabled_) {
    compat::set_autocast(device_type_, true, autocast_dtype(precision));
  } else if (was_enabled_) {  // fp32 or tf32 inside a mixed-precision pass: off until the scope ends
    compat::set_autocast(device_type_, false, compat::autocast_dtype(device_type_));
  }
}

AutocastScope::~AutocastScope() {
  if (!enabled_) {
    if (was_enabled_) compat::set_autocast(device_type_, true, compat::autocast_dtype(device_type_));
    return;
  }
  compat::set_autocast(device_type_, was_enabled_, at::kBFloat16);
  // Casts cached for this forward pass must not outlive it (weights change at every step).
  if (!was_enabled_) at::autocast::clear_cache();
}

}  // namespace mixseq
