// exp(y) - 1 in straight-line float arithmetic the compiler vectorizes, for mixseq's own
// element-wise loops (nn/vectorized_tanh.cpp, nn/softmax_rows.cpp): y = n ln 2 + r with
// |r| <= ln 2 / 2, then exp(y) - 1 = 2^n (exp(r) - 1) + 2^n - 1 with a degree-7 Taylor
// polynomial of exp(r) - 1. The -1 is never subtracted from a rounded exp, so the result stays
// accurate relatively near y = 0. Needs y within [-87, 88] (2^n a normal float); callers clamp.
#pragma once

#include <cstdint>
#include <cstring>

namespace mixseq {

struct ExpMinusOneParts {
  float scale;              // 2^n
  float scaled_expm1_of_r;  // 2^n (exp(r) - 1)
};

__attribute__((always_inline)) inline ExpMinusOneParts exp_minus_one_parts(float y) {
  // n = round(y / ln 2): adding 1.5 * 2^23 rounds to an integer, held in the mantissa's low bits.
  constexpr float kRound = 12582912.0f;
  const float shifted = y * 1.44269504088896341f + kRound;
  const float n = shifted - kRound;
  int32_t shifted_bits, round_bits;
  std::memcpy(&shifted_bits, &shifted, sizeof shifted);
  std::memcpy(&round_bits, &kRound, sizeof kRound);
  // ln 2 in two parts (Cody and Waite), so that n ln 2 is subtracted exactly.
  const float r = (y - n * 0.693145751953125f) - n * 1.428606765330187045e-06f;
  // exp(r) - 1 = r q(r), kept apart from the 1 so that small |y| (n = 0) loses no digits.
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
  return {scale, scale * (r * q)};
}

// exp(x) for x clamped to [-87, 88], where 2^n is a normal float: exp(-87) is 1.6e-38, not 0.
__attribute__((always_inline)) inline float exp_by_range_reduction(float x) {
  x = x < -87.0f ? -87.0f : x;
  x = x > 88.0f ? 88.0f : x;
  const auto [scale, scaled_expm1_of_r] = exp_minus_one_parts(x);
  return scaled_expm1_of_r + scale;
}

}  // namespace mixseq
