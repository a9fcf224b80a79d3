#include "mixseq/util/cpu_kernels.h"

#include <cpuid.h>
#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>

namespace mixseq {
namespace {

struct CpuFeatures {
  bool intel = false, amd = false;
  bool avx2 = false, fma = false;
  bool avx512 = false;       // F, CD, BW, DQ and VL: what OpenBLAS's SkylakeX kernels use
  bool avx512_bf16 = false;  // Cooper Lake and later
  bool os_saves_avx512 = false, os_saves_avx = false;
};

CpuFeatures read_cpu_features() {
  CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return f;
  const unsigned max_leaf = a;
  f.intel = b == 0x756e6547 && d == 0x49656e69 && c == 0x6c65746e;  // "GenuineIntel"
  f.amd = (b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163) ||  // "AuthenticAMD"
          (b == 0x6f677948 && d == 0x6e65476e && c == 0x656e6975);   // "HygonGenuine"
  __get_cpuid(1, &a, &b, &c, &d);
  f.fma = (c >> 12) & 1;
  const bool osxsave = (c >> 27) & 1;
  if (osxsave) {
    unsigned xcr0_low = 0, xcr0_high = 0;
    __asm__("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
    f.os_saves_avx = (xcr0_low & 0x6) == 0x6;            // XMM and YMM state
    f.os_saves_avx512 = (xcr0_low & 0xe6) == 0xe6;       // and opmask, ZMM_Hi256, Hi16_ZMM
  }
  if (max_leaf >= 7) {
    __cpuid_count(7, 0, a, b, c, d);
    f.avx2 = (b >> 5) & 1;
    const bool f512 = (b >> 16) & 1, dq = (b >> 17) & 1, cd = (b >> 28) & 1, bw = (b >> 30) & 1, vl = (b >> 31) & 1;
    f.avx512 = f512 && dq && cd && bw && vl;
    __cpuid_count(7, 1, a, b, c, d);
    f.avx512_bf16 = (a >> 5) & 1;
  }
#endif
  return f;
}

std::string best_core_for(const CpuFeatures& f) {
  if (f.avx512 && f.os_saves_avx512) return f.avx512_bf16 ? "Cooperlake" : "SkylakeX";
  if (f.avx2 && f.fma && f.os_saves_avx) return f.amd ? "Zen" : "Haswell";
  return "";
}

std::string lower_case(const std::string& text) {
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower;
}

// How wide a core's single-precision kernels are: a core is weaker than another when its rank is lower.
int rank_of(const std::string& core) {
  static const std::map<std::string, int> ranks = {
      {"haswell", 2}, {"zen", 2}, {"skylakex", 3}, {"cooperlake", 3}, {"sapphirerapids", 3}};
  const auto it = ranks.find(lower_case(core));
  return it == ranks.end() ? 0 : it->second;
}

std::string onednn_isa_name(int isa) {
  // dnnl_cpu_isa_t of oneDNN 2.x (dnnl_types.h).
  switch (isa) {
    case 0x0: return "all";
    case 0x1: return "sse41";
    case 0x3: return "avx";
    case 0x7: return "avx2";
    case 0x407: return "avx2_vnni";
    case 0x27: return "avx512_core";
    case 0x67: return "avx512_core_vnni";
    case 0xe7: return "avx512_core_bf16";
    case 0x3e7: return "avx512_core_amx";
    default: {
      char hex[16];
      std::snprintf(hex, sizeof hex, "0x%x", isa);
      return hex;
    }
  }
}

CpuKernels choose() {
  CpuKernels kernels;
  kernels.best_blas_core = best_core_for(read_cpu_features());
  using CoreName = char* (*)();
  using Hook = void (*)();
  const auto core_name = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  const auto quit = reinterpret_cast<Hook>(dlsym(RTLD_DEFAULT, "gotoblas_dynamic_quit"));
  const auto init = reinterpret_cast<Hook>(dlsym(RTLD_DEFAULT, "gotoblas_dynamic_init"));
  using EffectiveIsa = int (*)();
  if (const auto isa = reinterpret_cast<EffectiveIsa>(dlsym(RTLD_DEFAULT, "dnnl_get_effective_cpu_isa")))
    kernels.onednn_isa = onednn_isa_name(isa());
  if (core_name == nullptr) return kernels;  // not OpenBLAS
  kernels.blas_core = core_name();
  kernels.user_set = std::getenv("OPENBLAS_CORETYPE") != nullptr;
  if (kernels.user_set || kernels.best_blas_core.empty() || quit == nullptr || init == nullptr) return kernels;
  if (blas_core_covers(kernels.blas_core, kernels.best_blas_core)) return kernels;
  // OpenBLAS reads OPENBLAS_CORETYPE at its (re)initialization; the variable is set for this
  // process only while it does, so that child processes choose for themselves.
  setenv("OPENBLAS_CORETYPE", kernels.best_blas_core.c_str(), 1);
  quit();
  init();
  unsetenv("OPENBLAS_CORETYPE");
  kernels.blas_core_was = kernels.blas_core;
  kernels.blas_core = core_name();
  return kernels;
}

}  // namespace

bool aten_at_baseline_kernels() {
  static const bool baseline = [] {
    const char* capability = std::getenv("ATEN_CPU_CAPABILITY");
    return capability != nullptr && std::string(capability) == "default";
  }();
  return baseline;
}

bool blas_core_covers(const std::string& core, const std::string& wanted) {
  return lower_case(core) == lower_case(wanted) || rank_of(core) >= rank_of(wanted);
}

const CpuKernels& choose_cpu_kernels() {
  static const CpuKernels kernels = choose();
  return kernels;
}

std::string describe_cpu_kernels(const CpuKernels& kernels) {
  std::string text = kernels.blas_core.empty() ? "BLAS not OpenBLAS" : "OpenBLAS " + kernels.blas_core;
  if (!kernels.blas_core_was.empty()) text += " (switched from " + kernels.blas_core_was + ")";
  // A core the user set is kept; where it is narrower than the CPU runs, it says so: a machine image
  // that sets OPENBLAS_CORETYPE=Haswell on an AVX-512 Zen 5 ran fp32 products at 197 GFLOP/s, not 330.
  if (kernels.user_set)
    text += kernels.best_blas_core.empty() || blas_core_covers(kernels.blas_core, kernels.best_blas_core)
                ? " (OPENBLAS_CORETYPE)"
                : " (OPENBLAS_CORETYPE; this CPU runs " + kernels.best_blas_core +
                      "'s wider kernels: fp32 is faster without it)";
  if (!kernels.onednn_isa.empty()) text += ", oneDNN " + kernels.onednn_isa;
  return text;
}

}  // namespace mixseq
