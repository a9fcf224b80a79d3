#include "mixseq/nn/softmax_rows.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "nn/exp_by_range_reduction.h"
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

// out_v = exp(z_v - shift); returns Σ_v out_v.
MIXSEQ_VECTOR_CLONES
float shifted_exp_sum(const float* z, int64_t n, float shift, float* out) {
  float sum[kLanes] = {};
  int64_t v = 0;
  for (; v + kLanes <= n; v += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      out[v + l] = exp_by_range_reduction(z[v + l] - shift);
      sum[l] += out[v + l];
    }
  for (int l = 0; v < n; ++v, ++l) {
    out[v] = exp_by_range_reduction(z[v] - shift);
    sum[l] += out[v];
  }
  float s = 0.0f;
  for (int l = 0; l < kLanes; ++l) s += sum[l];
  return s;
}

// z_v <- z_v + add_v + mask_v (each addend may be null); returns the row's maximum. The sums and the
// maximum in two loops: the row is in the L1 cache by the second, and one loop holding both the
// store and the reduction stays scalar (GCC 12).
MIXSEQ_VECTOR_CLONES
float add_and_max(float* __restrict z, const float* __restrict add, const float* __restrict mask, int64_t n) {
  if (add != nullptr && mask != nullptr) {
    for (int64_t v = 0; v < n; ++v) z[v] += add[v] + mask[v];
  } else if (add != nullptr || mask != nullptr) {
    const float* addend = add != nullptr ? add : mask;
    for (int64_t v = 0; v < n; ++v) z[v] += addend[v];
  }
  float max[kLanes];
  for (int l = 0; l < kLanes; ++l) max[l] = -std::numeric_limits<float>::infinity();
  int64_t v = 0;
  for (; v + kLanes <= n; v += kLanes)
    for (int l = 0; l < kLanes; ++l) max[l] = z[v + l] > max[l] ? z[v + l] : max[l];
  for (int l = 0; v < n; ++v, ++l) max[l] = z[v] > max[l] ? z[v] : max[l];
  float m = max[0];
  for (int l = 0; l < kLanes; ++l) m = max[l] > m ? max[l] : m;
  return m;
}

// z_v <- exp(z_v - shift), exactly 0 where z_v is -inf (exp_by_range_reduction's floor is
// exp(-87)); returns Σ_v z_v.
MIXSEQ_VECTOR_CLONES
float exp_sum_in_place(float* z, int64_t n, float shift) {
  constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();
  float sum[kLanes] = {};
  int64_t v = 0;
  for (; v + kLanes <= n; v += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      const float e = z[v + l] == kMinusInfinity ? 0.0f : exp_by_range_reduction(z[v + l] - shift);
      z[v + l] = e;
      sum[l] += e;
    }
  for (int l = 0; v < n; ++v, ++l) {
    const float e = z[v] == kMinusInfinity ? 0.0f : exp_by_range_reduction(z[v] - shift);
    z[v] = e;
    sum[l] += e;
  }
  float s = 0.0f;
  for (int l = 0; l < kLanes; ++l) s += sum[l];
  return s;
}

MIXSEQ_VECTOR_CLONES
void scale_row(float* z, int64_t n, float factor) {
  for (int64_t v = 0; v < n; ++v) z[v] *= factor;
}

}  // namespace

void masked_softmax_row(float* z, const float* add, const float* mask, int64_t n) {
  const float max = add_and_max(z, add, mask, n);
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
