// Rows of bf16 values widened to fp32 and fp32 rounded to bf16 in SIMD registers, for kernels
// that keep fp32 buffers of their own and read or write bf16 tensors (the fused cross-entropy's
// logits and gradient, the LSTM's bf16 copies of h and of its gate gradients). The loops compile
// for the CPU they run on (util/vector_clones.h); LibTorch's conversions allocate a tensor each.
#pragma once

#include <c10/util/BFloat16.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace mixseq {

// out_v = float(in_v) for v < n.
void widen_row(const c10::BFloat16* in, int64_t n, float* out);

// out_v = in_v rounded to the nearest bf16, ties to even (as c10::BFloat16(float)), for v < n.
void narrow_row(const float* in, int64_t n, c10::BFloat16* out);

// The dtype a row kernel computes in for rows of `scalar_t`: fp64 for fp64 (gradient checks), fp32
// for every other (fp32, bf16, fp16).
template <typename scalar_t>
using RowArithmetic = std::conditional_t<std::is_same_v<scalar_t, double>, double, float>;

// A row of n values in the arithmetic's dtype: fp32 and fp64 rows as they are, others widened into
// `buffer` [n].
template <typename scalar_t>
const RowArithmetic<scalar_t>* widened_row(const scalar_t* row, int64_t n, RowArithmetic<scalar_t>* buffer) {
  if constexpr (std::is_same_v<scalar_t, RowArithmetic<scalar_t>>) {
    return row;
  } else if constexpr (std::is_same_v<scalar_t, c10::BFloat16>) {
    widen_row(row, n, buffer);
    return buffer;
  } else {
    for (int64_t v = 0; v < n; ++v) buffer[v] = static_cast<float>(row[v]);
    return buffer;
  }
}

// Stores n `values` (the arithmetic's dtype) as a row of `scalar_t`.
template <typename scalar_t>
void store_row(const RowArithmetic<scalar_t>* values, int64_t n, scalar_t* row) {
  if constexpr (std::is_same_v<scalar_t, RowArithmetic<scalar_t>>) {
    if (values != row) std::copy(values, values + n, row);
  } else if constexpr (std::is_same_v<scalar_t, c10::BFloat16>) {
    narrow_row(values, n, row);
  } else {
    for (int64_t v = 0; v < n; ++v) row[v] = static_cast<scalar_t>(values[v]);
  }
}

// The bf16 copy of a row that a later bf16 product reads, written by the pass that makes the row
// rather than converted afterwards (the recurrences' h_t and gate gradients under bf16 autocast,
// nn/lstm_recurrence.h, nn/gru_recurrence.h): into `low` [n] when there is one. Rows of fp64
// (gradient checks) never have one.
template <typename scalar_t>
void keep_for_products(const scalar_t* row, int64_t n, c10::BFloat16* low) {
  if constexpr (std::is_same_v<scalar_t, float>) {
    if (low) narrow_row(row, n, low);
  }
}

}  // namespace mixseq
