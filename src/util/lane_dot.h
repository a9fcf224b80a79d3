// A dot product for mixseq's own vectorized kernels (with util/vector_clones.h).
#pragma once

#include <cstdint>
#include <cstring>

namespace mixseq {

// Sixteen lanes as one value of GCC's (and Clang's) vector extension: one AVX-512 register of
// floats, two of AVX2, and so on down to the baseline, whatever copy util/vector_clones.h picks.
template <typename scalar_t>
struct Lanes {
  typedef scalar_t type __attribute__((vector_size(16 * sizeof(scalar_t))));
};

// Vectors are passed by reference only: by value, their ABI would differ between the copies
// util/vector_clones.h makes (Clang rejects it, GCC warns).
template <typename scalar_t>
__attribute__((always_inline)) inline void load_lanes(typename Lanes<scalar_t>::type& lanes, const scalar_t* p) {
  std::memcpy(&lanes, p, sizeof lanes);  // unaligned load
}

// The lanes' sum, halves added pairwise: four shuffle-and-add steps, where an array of sixteen
// partial sums becomes sixteen dependent scalar additions (through the stack), longer than the
// products themselves at n = 64.
template <typename scalar_t>
__attribute__((always_inline)) inline scalar_t sum_lanes(const typename Lanes<scalar_t>::type& lanes) {
  typename Lanes<scalar_t>::type v = lanes;
  v += __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
  v += __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3);
  v += __builtin_shufflevector(v, v, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1);
  v += __builtin_shufflevector(v, v, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0);
  return v[0];
}

// Sixteen running sums, one per lane: a single accumulator would keep the loop scalar (its
// additions may not be reordered). b's elements come through `load` (sixteen into lanes) and
// `value` (one), so that b may be stored otherwise than as scalar_t (int8 codes dequantized in
// registers, nn/single_query_attention.cpp).
template <typename scalar_t, typename stored_t, typename LoadLanes, typename LoadOne>
__attribute__((always_inline)) inline scalar_t lane_dot(const scalar_t* a, const stored_t* b, int64_t n,
                                                        const LoadLanes& load, const LoadOne& value) {
  typename Lanes<scalar_t>::type lanes = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    typename Lanes<scalar_t>::type x, y;
    load_lanes(x, a + i);
    load(y, b + i);
    lanes += x * y;
  }
  scalar_t sum = sum_lanes<scalar_t>(lanes);
  for (; i < n; ++i) sum += a[i] * value(b + i);
  return sum;
}

template <typename scalar_t>
__attribute__((always_inline)) inline scalar_t lane_dot(const scalar_t* a, const scalar_t* b, int64_t n) {
  return lane_dot(
      a, b, n,
      [](typename Lanes<scalar_t>::type& lanes, const scalar_t* p) __attribute__((always_inline)) {
        load_lanes(lanes, p);
      },
      [](const scalar_t* p) __attribute__((always_inline)) { return *p; });
}

// out[0, N) = Σ_k weight(k) · row(k)[0, N) over k = 0 ... K-1, in order: each block of 64 outputs
// held in four registers (four independent chains of additions; summed into memory, each addition
// would wait for the last store), then blocks of 16 in one, then one at a time. row(k) is a
// pointer to the k-th row's first element, or null to skip the row (it is never read); its
// elements come through `load` (sixteen into lanes) and `value` (one), as in lane_dot. For a row
// times a matrix's rows (nn/one_row_matmul.cpp) and attention's weighted sum of values
// (nn/single_query_attention.cpp).
template <typename scalar_t, typename stored_t, typename Weight, typename Row, typename LoadLanes, typename LoadOne>
__attribute__((always_inline)) inline void lane_weighted_rows(int64_t K, int64_t N, const Weight& weight, const Row& row,
                                                              const LoadLanes& load, const LoadOne& value,
                                                              scalar_t* out) {
  using Vector = typename Lanes<scalar_t>::type;
  int64_t n = 0;
  for (; n + 64 <= N; n += 64) {
    Vector sums[4] = {};
    for (int64_t k = 0; k < K; ++k) {
      const stored_t* p = row(k);
      if (p == nullptr) continue;
      const scalar_t w = weight(k);
      for (int c = 0; c < 4; ++c) {
        Vector x;
        load(x, p + n + 16 * c);
        sums[c] += w * x;
      }
    }
    std::memcpy(out + n, sums, sizeof sums);
  }
  for (; n + 16 <= N; n += 16) {
    Vector sum = {};
    for (int64_t k = 0; k < K; ++k) {
      const stored_t* p = row(k);
      if (p == nullptr) continue;
      Vector x;
      load(x, p + n);
      sum += weight(k) * x;
    }
    std::memcpy(out + n, &sum, sizeof sum);
  }
  for (; n < N; ++n) {
    scalar_t sum = 0;
    for (int64_t k = 0; k < K; ++k) {
      const stored_t* p = row(k);
      if (p != nullptr) sum += weight(k) * value(p + n);
    }
    out[n] = sum;
  }
}

}  // namespace mixseq
