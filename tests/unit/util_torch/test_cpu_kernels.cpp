#include "mixseq/util/cpu_kernels.h"

#include <ATen/ATen.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>

namespace mixseq {
namespace {

// As mixseq's main() does, before any test runs a product.
const CpuKernels& kKernels = choose_cpu_kernels();

TEST(CpuKernels, CoverageOfCoreNames) {
  EXPECT_TRUE(blas_core_covers("SkylakeX", "Haswell"));
  EXPECT_TRUE(blas_core_covers("Cooperlake", "SkylakeX"));
  EXPECT_TRUE(blas_core_covers("SKYLAKEX", "Cooperlake"));  // the same single-precision kernels
  EXPECT_TRUE(blas_core_covers("Zen", "Haswell"));
  EXPECT_FALSE(blas_core_covers("Prescott", "SkylakeX"));
  EXPECT_FALSE(blas_core_covers("Prescott", "Haswell"));
  EXPECT_FALSE(blas_core_covers("Haswell", "SkylakeX"));
  EXPECT_FALSE(blas_core_covers("Sandybridge", "Zen"));
}

// What --version and the first log line say, the user's narrower choice included.
TEST(CpuKernels, DescriptionNamesTheCoreAndAUsersNarrowerChoice) {
  CpuKernels kernels;
  kernels.blas_core = "SkylakeX";
  kernels.blas_core_was = "Prescott";
  kernels.best_blas_core = "SkylakeX";
  kernels.onednn_isa = "avx512_core_amx";
  EXPECT_EQ(describe_cpu_kernels(kernels), "OpenBLAS SkylakeX (switched from Prescott), oneDNN avx512_core_amx");
  kernels.blas_core_was.clear();
  kernels.user_set = true;
  kernels.blas_core = "Cooperlake";  // as wide as the best: nothing to add
  EXPECT_EQ(describe_cpu_kernels(kernels), "OpenBLAS Cooperlake (OPENBLAS_CORETYPE), oneDNN avx512_core_amx");
  kernels.blas_core = "Haswell";
  kernels.best_blas_core = "Cooperlake";
  kernels.onednn_isa.clear();
  EXPECT_EQ(describe_cpu_kernels(kernels),
            "OpenBLAS Haswell (OPENBLAS_CORETYPE; this CPU runs Cooperlake's wider kernels: fp32 is faster without it)");
  kernels.best_blas_core.clear();  // a CPU with none of the cores mixseq knows
  EXPECT_EQ(describe_cpu_kernels(kernels), "OpenBLAS Haswell (OPENBLAS_CORETYPE)");
}

// The core OpenBLAS runs matches the widest instruction set the CPU has (issue 29), and products
// on it are right.
TEST(CpuKernels, OpenBlasRunsTheWidestCoreTheCpuHas) {
  if (kKernels.blas_core.empty()) GTEST_SKIP() << "this LibTorch's BLAS is not OpenBLAS";
  if (kKernels.user_set) GTEST_SKIP() << "OPENBLAS_CORETYPE is set in the environment: the user's choice is kept";
  if (kKernels.best_blas_core.empty())
    GTEST_SKIP() << "this CPU has neither AVX-512 nor AVX2 with FMA: OpenBLAS's own choice is its best";
  using CoreName = char* (*)();
  const auto core_name = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  ASSERT_NE(core_name, nullptr);
  EXPECT_EQ(kKernels.blas_core, std::string(core_name()));
  EXPECT_TRUE(blas_core_covers(kKernels.blas_core, kKernels.best_blas_core))
      << "OpenBLAS runs " << kKernels.blas_core << ", the CPU runs " << kKernels.best_blas_core;
  EXPECT_EQ(std::getenv("OPENBLAS_CORETYPE"), nullptr);  // set only while OpenBLAS re-read it
  at::manual_seed(5);
  const auto a = at::randn({96, 200}), b = at::randn({200, 72});
  const auto exact = at::mm(a.to(at::kDouble), b.to(at::kDouble));
  EXPECT_TRUE(at::allclose(at::mm(a, b).to(at::kDouble), exact, 1e-4, 1e-4));
  std::cout << "[ INFO ] " << describe_cpu_kernels(kKernels) << " (best for this CPU: " << kKernels.best_blas_core
            << ")\n";
}

}  // namespace
}  // namespace mixseq
