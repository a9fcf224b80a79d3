// LibTorch's CPU tensors on transparent huge pages.
#pragma once

#include <string>

namespace mixseq {

// Every CPU tensor made afterwards on 2 MiB transparent huge pages, where the kernel grants them
// on request (/sys/kernel/mm/transparent_hugepage/enabled "madvise", Debian's default, or
// "always"):
// - blocks below kHeapBlockLimit (util/allocator.h, 32 MiB) come from glibc's heap, which is
//   advised for huge pages as it grows;
// - larger blocks (a language model's logits over a 33,280-word vocabulary: 93 MB a step) are
//   mapped on huge pages, and on free kept, up to 1 GiB in all, for the next block of about their
//   size (a training or evaluation loop asks for the same sizes at every step).
// Why: each 4 KiB page the kernel faults in cost 8-10 us of system time on a 2-core Zen 5 EPYC
// virtual machine (2026-12-01). glibc maps and unmaps a block over its mmap threshold at every
// allocation, so the LSTM language model's WikiText-2 step faulted in its 93 MB of logits anew
// each time; and a loop's first steps fault in the heap they grow (Transformer-XL's first three
// evaluation segments: 11,600, 7,000 and 5,400 faults). docs/benchmarks.md has the figures.
// Nothing is replaced where MIXSEQ_HUGE_PAGES=0, where GLIBC_TUNABLES sets glibc.malloc.hugetlb
// (the user chose), where the kernel grants no huge pages, or where LibTorch's CPU allocator
// cannot be replaced (util/torch_compat.h). Call once, early in main(), before any tensor is
// made; later calls do nothing. Memory given to tensors is not zeroed, as LibTorch's is not.
void use_huge_pages_for_tensors();

// What use_huge_pages_for_tensors did: "huge pages (madvise)", "4 KiB pages (MIXSEQ_HUGE_PAGES=0)",
// ...; for --version and the first log line of the commands that run models.
std::string describe_tensor_memory();

// Mapped blocks (kHeapBlockLimit and more) that tensors hold now, and those kept for reuse:
// counts and bytes. For tests and diagnostics.
struct TensorMappings {
  size_t live = 0, live_bytes = 0, kept = 0, kept_bytes = 0;
};
TensorMappings tensor_mappings();

// Unmaps every block kept for reuse, giving its memory back to the kernel (after a peak that will
// not come again; the tests, to start from none).
void release_kept_tensor_memory();

}  // namespace mixseq
