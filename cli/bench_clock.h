// What the benchmark programs (bench_command, bench_speech, bench_synthesis) time with: a device's
// queued work finished before a clock is read.
#pragma once

#include <torch/types.h>

namespace mixseq::cli {

// Returns when the work queued on `device` is done: CUDA kernels run after their calls return, so a
// clock read without this would time the queueing. Nothing to wait for on the CPU.
void wait_for_device(const torch::Device& device);

}  // namespace mixseq::cli
