// CPU threads. LibTorch on Debian starts with one intra-op thread; mixseq uses every core
// unless told otherwise. Call configure_threads once, early in main(), before any tensor work:
// LibTorch fixes its inter-op pool size on first use.
#pragma once

namespace mixseq {

// Sets LibTorch's intra-op and inter-op thread counts and OpenBLAS's to `threads`
// (<= 0: one per core). Returns the count in use.
int configure_threads(int threads);

}  // namespace mixseq
