#include "mixseq/nn/vectorized_tanh.h"

#include <cstring>

#include "util/vector_clones.h"

// Compiled with -fno-trapping-math (src/CMakeLists.txt): otherwise the clamp below is a branch
// and the loop stays scalar.

namespace mixseq {
namespace {

__attribute__((always_inline)) inline float tanh_by_exp(float x) {
  // tanh(±10) rounds to ±1 in float; the clamp keeps 2^n below in range.
  x = x < -10.0f ? -10.0f : x;
  x = x > 10.0f ? 10.0f : x;
  const float y = 2.0f * x;
  // n = round(y / ln 2): adding 1.5 * 2^23 rounds to an integer, held in the mantissa's low bits.
  constexpr float kRound = 12582912.0f;
  const float shifted = y * 1.44269504088896341f + kRound;
  const float n = shifted - kRound;
  int32_t shifted_bits, round_bits;
  std::memcpy(&shifted_bits, &shifted, sizeof shifted);
  std::memcpy(&round_bits, &kRound, sizeof kRound);
  // ln 2 in two parts (Cody and Waite), so that n ln 2 is subtracted exactly.
  const float r = (y - n * 0.693145751953125f) - n * 1.428606765330187045e-06f;
  // exp(r) - 1 = r q(r), kept apart from the 1 so that small |x| (n = 0) loses no digits.
  float q = 1.0f / 5040;
  q = q * r + 1.0f / 720;
  q = q * r + 1.0f / 120;
  q = q * r + 1.0f / 24;
  q = q * r + 1.0f / 6;
  q = q * r + 0.5f;
  q = q * r + 1.0f;
  // 2^n; unsigned, as a NaN's n would shift a signed value out of range.
  const uint32_t scale_bits = static_cast<uint32_t>(shifted_bits - round_bits + 127) << 23;
  float scale;
  std::memcpy(&scale, &scale_bits, sizeof scale);
  const float exp_minus_one = scale * (r * q) + (scale - 1.0f);  // exp(2x) - 1 = 2^n (exp(r) - 1) + 2^n - 1
  return exp_minus_one / (exp_minus_one + 2.0f);
}

MIXSEQ_VECTOR_CLONES
void tanh_loop(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = tanh_by_exp(x[i]);
}

}  // namespace

void vectorized_tanh_in_place(float* x, int64_t n) { tanh_loop(x, n); }

}  // namespace mixseq
