#include "mixseq/nn/softmax_rows.h"

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

}  // namespace

SoftmaxRowStats softmax_row_stats(const float* z, int64_t n, float* scratch) {
  float max = 0.0f, sum = 0.0f;
  max_and_sum(z, n, &max, &sum);
  if (!std::isfinite(max)) return {max + std::log(static_cast<float>(n)), sum};  // ±inf or NaN rows stay so
  return {max + std::log(shifted_exp_sum(z, n, max, scratch)), sum};
}

void softmax_row(const float* z, int64_t n, float log_sum_exp, float* p) { shifted_exp_sum(z, n, log_sum_exp, p); }

}  // namespace mixseq
