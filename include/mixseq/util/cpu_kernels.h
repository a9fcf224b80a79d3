// Which kernels a CPU's products run on, and the one choice mixseq corrects.
//
// fp32 products go to OpenBLAS, which picks its kernels ("core") once, from the CPU's family and
// model numbers. Debian 12's OpenBLAS 0.3.21 does not know CPUs newer than it (Intel family 6
// model 207, Emerald Rapids, among them) and falls back to its Prescott kernels: SSE3, a quarter
// to a fifth of the fp32 speed of the AVX-512 kernels the same CPU runs (38 against 182 GFLOP/s
// for 1024^3 on 2 threads; docs/benchmarks.md). bf16 products go to oneDNN, which dispatches by
// instruction set and is not affected.
//
// choose_cpu_kernels() compares OpenBLAS's core with the widest one the CPU's instruction sets
// run (cpuid, as the kernel reports them): Cooperlake for AVX-512 with BF16, SkylakeX for
// AVX-512 (F, CD, BW, DQ, VL), Haswell for AVX2 with FMA on Intel, Zen on AMD. When OpenBLAS
// chose a weaker core it switches OpenBLAS to the better one in place, before any product has
// run: OpenBLAS's own gotoblas_dynamic_quit / gotoblas_dynamic_init, with OPENBLAS_CORETYPE set,
// are what it does at load time (its kernels' tables and block sizes follow the core; its
// buffers are sized for every core of the build). A value of OPENBLAS_CORETYPE the user set is
// never overridden. Where OpenBLAS is not the BLAS (PyTorch's LibTorch with MKL), nothing changes.
#pragma once

#include <string>

namespace mixseq {

struct CpuKernels {
  std::string blas_core;       // OpenBLAS's core now ("SkylakeX"); "" when OpenBLAS is not loaded
  std::string blas_core_was;   // the core OpenBLAS had picked itself, when mixseq switched it; "" otherwise
  std::string best_blas_core;  // the widest core the CPU's instruction sets run; "" when none of the above
  bool user_set = false;       // OPENBLAS_CORETYPE was set before mixseq started: left alone
  std::string onednn_isa;      // oneDNN's instruction set for bf16 ("avx512_core_amx"); "" without oneDNN
};

// Call first thing in main(), before any product. Idempotent: later calls return the first result.
const CpuKernels& choose_cpu_kernels();

// "OpenBLAS SkylakeX (switched from Prescott), oneDNN avx512_core_amx": for --version and logs.
// A core set by OPENBLAS_CORETYPE that is narrower than the CPU's best says so: "OpenBLAS Haswell
// (OPENBLAS_CORETYPE; this CPU runs Cooperlake's wider kernels: fp32 is faster without it)".
std::string describe_cpu_kernels(const CpuKernels& kernels);

// OpenBLAS core `core`'s single-precision kernels are at least as wide as those of core `wanted`
// (names as OpenBLAS writes them, in any case): Cooperlake covers SkylakeX, SkylakeX covers
// Haswell and Zen, Prescott covers nothing wider than itself.
bool blas_core_covers(const std::string& core, const std::string& wanted);

// Whether ATen is held to its baseline kernels (ATEN_CPU_CAPABILITY=default), as
// tests/e2e/train_golden_losses.sh runs for the same bits on every machine. mixseq's own kernels
// that choose their instruction set themselves (oneDNN's sgemm, nn/float_attention_core.h) then
// step aside for ATen's, whose BLAS that test pins as well.
bool aten_at_baseline_kernels();

}  // namespace mixseq
