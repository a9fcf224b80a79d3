// MIXSEQ_VECTOR_CLONES before a function: one copy of it per instruction set (AVX-512, AVX2,
// the baseline), chosen by the loader from the CPU (GCC's and Clang's target_clones on x86-64).
// For the element-wise loops mixseq writes itself: Debian's packages target the x86-64 baseline,
// SSE2, where such loops run 2-5x slower.
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MIXSEQ_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define MIXSEQ_VECTOR_CLONES
#endif
