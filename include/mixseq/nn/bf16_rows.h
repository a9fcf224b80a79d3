// Rows of bf16 values widened to fp32 and fp32 rounded to bf16 in SIMD registers, for kernels
// that keep fp32 buffers of their own and read or write bf16 tensors (the fused cross-entropy's
// logits and gradient, the LSTM's bf16 copies of h and of its gate gradients). The loops compile
// for the CPU they run on (util/vector_clones.h); LibTorch's conversions allocate a tensor each.
#pragma once

#include <c10/util/BFloat16.h>

#include <cstdint>

namespace mixseq {

// out_v = float(in_v) for v < n.
void widen_row(const c10::BFloat16* in, int64_t n, float* out);

// out_v = in_v rounded to the nearest bf16, ties to even (as c10::BFloat16(float)), for v < n.
void narrow_row(const float* in, int64_t n, c10::BFloat16* out);

}  // namespace mixseq
