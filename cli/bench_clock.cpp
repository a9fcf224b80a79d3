#include "bench_clock.h"

#ifdef MIXSEQ_WITH_CUDA
#include <torch/cuda.h>
#endif

namespace mixseq::cli {

void wait_for_device(const torch::Device& device) {
#ifdef MIXSEQ_WITH_CUDA
  if (device.is_cuda()) torch::cuda::synchronize();
#else
  (void)device;
#endif
}

}  // namespace mixseq::cli
