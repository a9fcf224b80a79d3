#include "mixseq/nn/softmax_rows.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "nn/exp_by_range_reduction.h"
#include "util/lane_dot.h"
#include "util/vector_clones.h"

// Compiled with -fno-trapping-math (src/CMakeLists.txt): otherwise the clamps and maxima below
// are branches and the loops stay scalar.

namespace mixseq {
namespace {

constexpr int kLanes = 16;  // independent partial results, one AVX-512 register of floats

MIXSEQ_VECTOR_CLONES
void max_and_sum(const float* z, int64_t n, float* max_out, float* sum_out) {
  float max[kLanes], sum[kLanes];
  for (int l = 0; l < kLanes; ++l) max[l] = -std::numeric_limits<float>::infinity(), sum[l] = 0.0f;
  int64_t v = 0;
  for (; v + kLanes <= n; v += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      max[l] = z[v + l] > max[l] ? z[v + l] : max[l];
      sum[l] += z[v + l];
    }
  for (int l = 0; v < n; ++v, ++l) {
    max[l] = z[v] > max[l] ? z[v] : max[l];
    sum[l] += z[v];
  }
  float m = max[0], s = 0.0f;
  for (int l = 0; l < kLanes; ++l) m = max[l] > m ? max[l] : m, s += sum[l];
  *max_out = m;
  *sum_out = s;
}

// out_v = exp(z_v - shift) (out may be z); returns Σ_v out_v. With ZeroAtMinusInfinity an entry at
// -inf gives exactly 0 (exp_by_range_reduction's floor is exp(-87)).
template <bool ZeroAtMinusInfinity>
__attribute__((always_inline)) inline float exp_sum(const float* z, int64_t n, float shift, float* out) {
  const auto exp_of = [shift](float value) {
    const float e = exp_by_range_reduction(value - shift);
    if constexpr (ZeroAtMinusInfinity) return value == -std::numeric_limits<float>::infinity() ? 0.0f : e;
    return e;
  };
  float sum[kLanes] = {};
  int64_t v = 0;
  for (; v + kLanes <= n; v += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      out[v + l] = exp_of(z[v + l]);
      sum[l] += out[v + l];
    }
  for (int l = 0; v < n; ++v, ++l) {
    out[v] = exp_of(z[v]);
    sum[l] += out[v];
  }
  float s = 0.0f;
  for (int l = 0; l < kLanes; ++l) s += sum[l];
  return s;
}

MIXSEQ_VECTOR_CLONES
float shifted_exp_sum(const float* z, int64_t n, float shift, float* out) {
  return exp_sum<false>(z, n, shift, out);
}

MIXSEQ_VECTOR_CLONES
float exp_sum_in_place(float* z, int64_t n, float shift) { return exp_sum<true>(z, n, shift, z); }

// z_v <- z_v + add_v + mask_v (each addend may be null). Apart from the maximum (max_and_sum):
// one loop holding both the store and the reduction stays scalar (GCC 12), and the row is in the
// L1 cache by the second.
MIXSEQ_VECTOR_CLONES
void add_addends(float* __restrict z, const float* __restrict add, const float* __restrict mask, int64_t n) {
  if (add != nullptr && mask != nullptr) {
    for (int64_t v = 0; v < n; ++v) z[v] += add[v] + mask[v];
  } else if (add != nullptr || mask != nullptr) {
    const float* addend = add != nullptr ? add : mask;
    for (int64_t v = 0; v < n; ++v) z[v] += addend[v];
  }
}

MIXSEQ_VECTOR_CLONES
void scale_row(float* z, int64_t n, float factor) {
  for (int64_t v = 0; v < n; ++v) z[v] *= factor;
}

// max_v (z_v + bias_v) (bias may be null), in 16 lanes as max_and_sum.
MIXSEQ_VECTOR_CLONES
float biased_max(const float* __restrict z, const float* __restrict bias, int64_t n) {
  float max[kLanes];
  for (int l = 0; l < kLanes; ++l) max[l] = -std::numeric_limits<float>::infinity();
  const auto at = [&](int64_t v) { return bias != nullptr ? z[v] + bias[v] : z[v]; };
  int64_t v = 0;
  for (; v + kLanes <= n; v += kLanes)
    for (int l = 0; l < kLanes; ++l) max[l] = at(v + l) > max[l] ? at(v + l) : max[l];
  for (int l = 0; v < n; ++v, ++l) max[l] = at(v) > max[l] ? at(v) : max[l];
  float m = max[0];
  for (int l = 0; l < kLanes; ++l) m = max[l] > m ? max[l] : m;
  return m;
}

// Σ_v exp(z_v + bias_v - shift), stored nowhere, in 16 lanes as exp_sum.
template <bool Biased>
__attribute__((always_inline)) inline float unstored_exp_sum(const float* __restrict z, const float* __restrict bias,
                                                             int64_t n, float shift) {
  const auto exp_at = [&](int64_t v) {
    if constexpr (Biased) return exp_by_range_reduction(z[v] + bias[v] - shift);
    return exp_by_range_reduction(z[v] - shift);
  };
  float sum[kLanes] = {};
  int64_t v = 0;
  for (; v + kLanes <= n; v += kLanes)
    for (int l = 0; l < kLanes; ++l) sum[l] += exp_at(v + l);
  for (int l = 0; v < n; ++v, ++l) sum[l] += exp_at(v);
  float s = 0.0f;
  for (int l = 0; l < kLanes; ++l) s += sum[l];
  return s;
}

MIXSEQ_VECTOR_CLONES
float biased_exp_sum(const float* z, const float* bias, int64_t n, float shift) {
  return bias != nullptr ? unstored_exp_sum<true>(z, bias, n, shift) : unstored_exp_sum<false>(z, bias, n, shift);
}

// Σ_v exp(z_v + bias_v) unshifted and max_v (z_v + bias_v), in one sweep of 16 lanes.
template <bool Biased>
__attribute__((always_inline)) inline void unshifted_exp_sum_and_max(const float* __restrict z,
                                                                     const float* __restrict bias, int64_t n,
                                                                     float* sum_out, float* max_out) {
  const auto at = [&](int64_t v) {
    if constexpr (Biased) return z[v] + bias[v];
    return z[v];
  };
  float sum[kLanes] = {}, max[kLanes];
  for (int l = 0; l < kLanes; ++l) max[l] = -std::numeric_limits<float>::infinity();
  int64_t v = 0;
  for (; v + kLanes <= n; v += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      const float x = at(v + l);
      max[l] = x > max[l] ? x : max[l];
      sum[l] += exp_by_range_reduction(x);
    }
  for (int l = 0; v < n; ++v, ++l) {
    const float x = at(v);
    max[l] = x > max[l] ? x : max[l];
    sum[l] += exp_by_range_reduction(x);
  }
  float m = max[0], s = 0.0f;
  for (int l = 0; l < kLanes; ++l) m = max[l] > m ? max[l] : m, s += sum[l];
  *sum_out = s;
  *max_out = m;
}

MIXSEQ_VECTOR_CLONES
void biased_unshifted_exp_sum(const float* z, const float* bias, int64_t n, float* sum, float* max) {
  if (bias != nullptr) {
    unshifted_exp_sum_and_max<true>(z, bias, n, sum, max);
  } else {
    unshifted_exp_sum_and_max<false>(z, bias, n, sum, max);
  }
}

// g_v <- p_v (g_v - Σ_u g_u p_u).
MIXSEQ_VECTOR_CLONES
void softmax_backward_in_place(const float* __restrict p, float* __restrict g, int64_t n) {
  const float shift = lane_dot(p, g, n);
  for (int64_t v = 0; v < n; ++v) g[v] = p[v] * (g[v] - shift);
}

}  // namespace

void softmax_backward_row(const float* p, float* g, int64_t n) { softmax_backward_in_place(p, g, n); }

float biased_row_max(const float* z, const float* bias, int64_t n) { return biased_max(z, bias, n); }

float biased_log_sum_exp(const float* z, const float* bias, int64_t n) {
  const float max = biased_max(z, bias, n);
  if (!std::isfinite(max)) return max + std::log(static_cast<float>(n));  // ±inf or NaN rows stay so
  return max + std::log(biased_exp_sum(z, bias, n, max));
}

float biased_log_sum_exp_in_one_sweep(const float* z, const float* bias, int64_t n) {
  float sum = 0.0f, max = 0.0f;
  biased_unshifted_exp_sum(z, bias, n, &sum, &max);
  // Within [-40, 60] no exponential overflows (n e^60 stays finite up to n = 10^12) and the
  // largest is far above exp_by_range_reduction's floor; elsewhere (and for rows that are not
  // finite) the shifted sweeps.
  if (max >= -40.0f && max <= 60.0f && sum > 0.0f) return std::log(sum);
  return biased_log_sum_exp(z, bias, n);
}

void masked_softmax_row(float* z, const float* add, const float* mask, int64_t n) {
  add_addends(z, add, mask, n);
  float max = 0.0f, unused_sum = 0.0f;
  max_and_sum(z, n, &max, &unused_sum);
  if (!std::isfinite(max)) {  // every entry -inf (all blocked), or a +inf: NaN, as at::softmax gives
    std::fill(z, z + n, std::numeric_limits<float>::quiet_NaN());
    return;
  }  // (a NaN entry escapes the maximum, and its exp makes the sum and so every entry NaN, as there)
  scale_row(z, n, 1.0f / exp_sum_in_place(z, n, max));
}

SoftmaxRowStats softmax_row_stats(const float* z, int64_t n, float* scratch) {
  float max = 0.0f, sum = 0.0f;
  max_and_sum(z, n, &max, &sum);
  if (!std::isfinite(max)) return {max + std::log(static_cast<float>(n)), sum};  // ±inf or NaN rows stay so
  return {max + std::log(shifted_exp_sum(z, n, max, scratch)), sum};
}

void softmax_row(const float* z, int64_t n, float log_sum_exp, float* p) { shifted_exp_sum(z, n, log_sum_exp, p); }

}  // namespace mixseq
