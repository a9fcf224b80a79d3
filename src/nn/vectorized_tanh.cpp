#include "mixseq/nn/vectorized_tanh.h"

#include "nn/exp_by_range_reduction.h"
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

}  // namespace

void vectorized_tanh_in_place(float* x, int64_t n) { tanh_loop(x, n); }

}  // namespace mixseq
