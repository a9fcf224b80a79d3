#include "mixseq/serve/micro_batcher.h"

#include "mixseq/util/error.h"

namespace mixseq {

void check_micro_batcher_options(const MicroBatcherOptions& options) {
  MIXSEQ_CHECK(options.max_batch_cost >= 1, "max_batch_cost must be at least 1; got ", options.max_batch_cost);
  MIXSEQ_CHECK(options.max_wait_ms >= 0, "max_wait_ms must be >= 0 (0 = no wait); got ", options.max_wait_ms);
}

}  // namespace mixseq
