// The LibTorch unit suites run on the kernels mixseq's commands run on: before the first test,
// choose_cpu_kernels() switches OpenBLAS to the widest core the CPU runs where OpenBLAS picked a
// weaker one (util/cpu_kernels.h), as api/process_setup.cpp does at every command's start. Without
// it the suites ran on Debian's OpenBLAS's own choice, Prescott (SSE3) kernels on CPUs newer than
// it, whose rounding no command sees (SpectralConv1d.AnUtterancesOutputDoesNotDependOnItsBatch
// failed there on an Intel model 207). OPENBLAS_CORETYPE, when set, is left alone as ever. The
// suites' tensors also live where the commands' do: glibc's heap kept for reuse, huge pages
// (util/allocator.h, util/tensor_memory.h).
#include <gtest/gtest.h>

#include "mixseq/util/allocator.h"
#include "mixseq/util/cpu_kernels.h"
#include "mixseq/util/tensor_memory.h"

namespace {

class CpuKernelsEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    mixseq::choose_cpu_kernels();
    mixseq::keep_freed_memory_for_reuse();
    mixseq::use_huge_pages_for_tensors();
  }
};

[[maybe_unused]] ::testing::Environment* const kCpuKernels =
    ::testing::AddGlobalTestEnvironment(new CpuKernelsEnvironment);

}  // namespace
