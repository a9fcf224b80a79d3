#include "bench_clock.h"

#include <ATen/Parallel.h>

#include <iostream>

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

void print_bench_record(nlohmann::json record, TimedPart& part, int64_t profile_top, int64_t repetitions) {
  record["threads_at_end"] = at::get_num_threads();
  std::cout << record.dump() << std::endl;
  if (part.profile) print_operator_profile(*part.profile, profile_top, part.seconds, repetitions);
}

}  // namespace mixseq::cli
