// A dot product for mixseq's own vectorized kernels (with util/vector_clones.h).
#pragma once

#include <cstdint>

namespace mixseq {

// Sixteen running sums, one per lane, which the compiler keeps in vector registers: a single
// accumulator would keep the loop scalar (its additions may not be reordered).
template <typename scalar_t>
__attribute__((always_inline)) inline scalar_t lane_dot(const scalar_t* a, const scalar_t* b, int64_t n) {
  scalar_t lanes[16] = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int j = 0; j < 16; ++j) lanes[j] += a[i + j] * b[i + j];
  scalar_t sum = 0;
  for (scalar_t lane : lanes) sum += lane;
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace mixseq
