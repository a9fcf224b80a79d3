// Peak memory, for benchmark reports.
#pragma once

#include <cstdint>

#include <torch/types.h>

namespace mixseq {

// Peak resident memory of this process so far, in bytes (getrusage's ru_maxrss).
int64_t peak_host_memory_bytes();

// Peak memory LibTorch's allocator held on `device` since the last reset, in bytes; 0 for the
// CPU, or when this build has no CUDA support.
int64_t peak_device_memory_bytes(const torch::Device& device);
void reset_peak_device_memory(const torch::Device& device);

}  // namespace mixseq
