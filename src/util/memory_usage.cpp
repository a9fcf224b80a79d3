#include "mixseq/util/memory_usage.h"

#include <sys/resource.h>

#ifdef MIXSEQ_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#include "util/torch_compat.h"

namespace mixseq {

int64_t peak_host_memory_bytes() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports kilobytes
}

int64_t peak_device_memory_bytes(const torch::Device& device) {
#ifdef MIXSEQ_WITH_CUDA
  if (device.is_cuda()) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index() < 0 ? 0 : device.index());
    return stats.allocated_bytes[compat::aggregate_allocator_stat].peak;
  }
#endif
  return 0;
}

void reset_peak_device_memory(const torch::Device& device) {
#ifdef MIXSEQ_WITH_CUDA
  if (device.is_cuda()) c10::cuda::CUDACachingAllocator::resetPeakStats(device.index() < 0 ? 0 : device.index());
#endif
}

}  // namespace mixseq
