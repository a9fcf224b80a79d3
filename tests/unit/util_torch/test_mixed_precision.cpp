#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <sstream>

#include "mixseq/util/mixed_precision.h"
#include "test_support.h"
#include "util/torch_compat.h"

namespace mixseq {
namespace {

bool lists_bf16(const std::string& cpuinfo) {
  std::istringstream stream(cpuinfo);
  return cpuinfo_lists_bf16(stream);
}

TEST(MixedPrecision, Bf16FlagsAreReadFromCpuinfo) {
  // The two machines measured in docs/benchmarks.md, and a Sapphire Rapids.
  EXPECT_FALSE(lists_bf16("processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma\nbogomips\t: 4000\n"));  // AMD EPYC
  EXPECT_FALSE(lists_bf16("flags\t\t: fpu avx2 avx512f avx512bw avx512_vnni\n"));                  // Xeon, no BF16
  EXPECT_TRUE(lists_bf16("flags\t\t: fpu avx2 avx512f avx512_bf16 amx_tile\n"));
  EXPECT_TRUE(lists_bf16("flags\t\t: fpu avx2 amx_bf16\n"));
  EXPECT_FALSE(lists_bf16("flags\t\t: fpu avx512_bf16x\n"));  // whole words only
  EXPECT_FALSE(lists_bf16(""));
}

TEST(MixedPrecision, AutoPicksBf16OnlyWhereComputedNatively) {
  const torch::Device cpu(torch::kCPU);
  const auto expected = computes_bf16_natively(cpu) ? Precision::kBf16 : Precision::kFp32;
  EXPECT_EQ(resolve_precision("auto", cpu), expected);
  EXPECT_EQ(resolve_precision("fp32", cpu), Precision::kFp32);
  EXPECT_EQ(resolve_precision("bf16", cpu), Precision::kBf16);  // explicit names are kept
  EXPECT_NE(test::error_of([&] { resolve_precision("fp8", cpu); }).find("known: auto, fp32"), std::string::npos);
}

// `translate --device cuda` without CUDA told the user to use --train.device (issue 11).
TEST(MixedPrecision, DeviceErrorsNameTheFlagInUse) {
  EXPECT_EQ(test::error_of([] { resolve_device("gpu", "--device"); }),
            "--device 'gpu' is not a device; use auto, cpu, cuda or cuda:N");
  if (torch::cuda::is_available()) GTEST_SKIP() << "CUDA is available: asking for it is no error";
  EXPECT_EQ(test::error_of([] { resolve_device("cuda", "--device"); }),
            "--device cuda asked for, but this LibTorch sees no CUDA device; use --device cpu");
  EXPECT_EQ(test::error_of([] { resolve_device("cuda:1", "--train.device"); }),
            "--train.device cuda:1 asked for, but this LibTorch sees no CUDA device; use --train.device cpu");
}

}  // namespace
}  // namespace mixseq

namespace mixseq {
namespace {

// A scope turns autocast on for bf16 and off for fp32, nested too, and each end restores the
// state before it.
TEST(MixedPrecision, AutocastScopesNestAndRestore) {
  const torch::Device cpu(torch::kCPU);
  ASSERT_FALSE(compat::is_autocast_enabled(c10::kCPU));
  {
    const AutocastScope outer(Precision::kBf16, cpu);
    EXPECT_TRUE(compat::is_autocast_enabled(c10::kCPU));
    {
      const AutocastScope inner(Precision::kFp32, cpu);
      EXPECT_FALSE(compat::is_autocast_enabled(c10::kCPU));
    }
    EXPECT_TRUE(compat::is_autocast_enabled(c10::kCPU));
    EXPECT_EQ(compat::autocast_dtype(c10::kCPU), at::kBFloat16);
  }
  EXPECT_FALSE(compat::is_autocast_enabled(c10::kCPU));
  {
    const AutocastScope alone(Precision::kFp32, cpu);
    EXPECT_FALSE(compat::is_autocast_enabled(c10::kCPU));
  }
  EXPECT_FALSE(compat::is_autocast_enabled(c10::kCPU));
}

}  // namespace
}  // namespace mixseq
