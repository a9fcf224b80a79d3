// The LibTorch unit suites run on the kernels mixseq's commands run on: before the first test,
// choose_cpu_kernels() switches OpenBLAS to the widest core the CPU runs where OpenBLAS picked a
// weaker one (util/cpu_kernels.h), as api/process_setup.cpp does at every command's start. Without
// it the suites ran on Debian's OpenBLAS's own choice, Prescott (SSE3) kernels on CPUs newer than
// it, whose rounding no command sees (SpectralConv1d.AnUtterancesOutputDoesNotDependOnItsBatch
// failed there on an Intel model 207). OPENBLAS_CORETYPE, when set, is left alone as ever.
#include <gtest/gtest.h>

#include "mixseq/util/cpu_kernels.h"

namespace {

class CpuKernelsEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { mixseq::choose_cpu_kernels(); }
};

[[maybe_unused]] ::testing::Environment* const kCpuKernels =
    ::testing::AddGlobalTestEnvironment(new CpuKernelsEnvironment);

}  // namespace
