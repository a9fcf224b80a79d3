#include "api/process_setup.h"

#include <mutex>

#include "mixseq/util/allocator.h"
#include "mixseq/util/tensor_memory.h"
#include "mixseq/util/cpu_kernels.h"
#include "mixseq/util/error.h"
#include "mixseq/util/threads.h"

namespace mixseq::api {

void configure_process_threads(int threads, const std::string& option) {
  MIXSEQ_CHECK(threads >= -1, option, " is ", threads,
               "; use -1 (leave as set), 0 (every usable core, following the load) or a count");
  static std::once_flag configured;
  if (threads >= 0)
    std::call_once(configured, [threads] {
      choose_cpu_kernels();
      keep_freed_memory_for_reuse();
      use_huge_pages_for_tensors();
      configure_threads(threads);
    });
}

}  // namespace mixseq::api
