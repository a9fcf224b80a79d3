#include "mixseq/util/allocator.h"

#include <malloc.h>

namespace mixseq {

void keep_freed_memory_for_reuse() {
  mallopt(M_MMAP_THRESHOLD, kHeapBlockLimit);  // glibc's largest: blocks below 32 MiB come from the reusable heap
  mallopt(M_TRIM_THRESHOLD, 1 << 30);   // give memory back to the kernel only past 1 GiB free at the top
  mallopt(M_TOP_PAD, 64 << 20);         // grow the heap 64 MiB at a time, not page by page
}

}  // namespace mixseq
