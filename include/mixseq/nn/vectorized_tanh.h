// tanh over a float array in SIMD registers, for kernels that apply it to buffers of their own.
//
// Debian's LibTorch computes at::tanh at about 2 ns an element on the AVX-512 Xeon, and the
// additive attention's [B, T, S, D] tanh is most of a GNMT beam step. Here tanh(x) =
// (exp(2x) - 1) / (exp(2x) + 1), exp(2x) - 1 by range reduction (2x = n ln 2 + r, |r| <= ln 2 / 2)
// and a degree-7 Taylor polynomial of exp(r) - 1, in straight-line arithmetic the compiler
// vectorizes: 0.4-0.7 ns an element with AVX-512 or AVX2, chosen at run time from the CPU
// (util/vector_clones.h). The error is a few float ulps, relative near 0 as well (the -1 is never
// subtracted from a rounded exp there).
#pragma once

#include <cstdint>

namespace mixseq {

// x[i] = tanh(x[i]) for i < n; NaN stays NaN.
void vectorized_tanh_in_place(float* x, int64_t n);

// out[r] = v · tanh(query + keys[r]) for r < rows, each of the n-wide vectors contiguous (keys
// row after row): additive attention's scores of one query in one pass, without the hidden layer
// in memory. Each tanh is the one vectorized_tanh_in_place gives; the sum runs in sixteen lanes.
void vectorized_tanh_dots(const float* query, const float* keys, int64_t rows, const float* v, int64_t n,
                          float* out);

}  // namespace mixseq
