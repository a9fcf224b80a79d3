#include "mixseq/nn/vectorized_tanh.h"

#include "nn/exp_by_range_reduction.h"
#include "util/lane_dot.h"
#include "util/vector_clones.h"

// Compiled with -fno-trapping-math (src/CMakeLists.txt): otherwise the clamp below is a branch
// and the loop stays scalar.

namespace mixseq {
namespace {

__attribute__((always_inline)) inline float tanh_by_exp(float x) {
  // tanh(±10) rounds to ±1 in float; the clamp keeps 2^n below in range.
  x = x < -10.0f ? -10.0f : x;
  x = x > 10.0f ? 10.0f : x;
  const auto [scale, scaled_expm1_of_r] = exp_minus_one_parts(2.0f * x);
  const float exp_minus_one = scaled_expm1_of_r + (scale - 1.0f);  // exp(2x) - 1
  return exp_minus_one / (exp_minus_one + 2.0f);
}

MIXSEQ_VECTOR_CLONES
void tanh_loop(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = tanh_by_exp(x[i]);
}

// v · tanh(query + keys[row]) for each row through lane_dot, the tanh taken as its lanes load.
MIXSEQ_VECTOR_CLONES
void tanh_dots_loop(const float* query, const float* keys, int64_t rows, const float* v, int64_t n, float* out) {
  for (int64_t row = 0; row < rows; ++row) {
    const float* k = keys + row * n;
    out[row] = lane_dot(
        v, k, n,
        [&](Lanes<float>::type& lanes, const float* p) __attribute__((always_inline)) {
          const float* q = query + (p - k);
          float hidden[16];
          for (int64_t l = 0; l < 16; ++l) hidden[l] = tanh_by_exp(q[l] + p[l]);
          load_lanes(lanes, hidden);
        },
        [&](const float* p) __attribute__((always_inline)) { return tanh_by_exp(query[p - k] + *p); });
  }
}

}  // namespace

void vectorized_tanh_in_place(float* x, int64_t n) { tanh_loop(x, n); }

void vectorized_tanh_dots(const float* query, const float* keys, int64_t rows, const float* v, int64_t n,
                          float* out) {
  tanh_dots_loop(query, keys, rows, v, n, out);
}

}  // namespace mixseq
