// Softmax over one row of logits at a time in SIMD registers, for fused kernels that keep the
// row in a float buffer of their own (criteria/label_smoothed_cross_entropy.cpp).
//
// Debian's LibTorch computes exp at about 0.5 ns an element on the AVX-512 Xeon and widens bf16
// logits for log_softmax through a slow path (5.8 ms for [32, 30, 2000], against 0.4 ms for the
// widening alone); bf16 rows go through nn/bf16_rows.h. Here exp uses the range reduction and
// polynomial of nn/vectorized_tanh.h (a few float ulps) and the sums run in 16 float lanes, in
// loops the compiler vectorizes for the CPU it runs on (util/vector_clones.h). Exponents below
// -87 give exp(-87) ≈ 1.6e-38, not 0.
#pragma once

#include <cstdint>

namespace mixseq {

struct SoftmaxRowStats {
  float log_sum_exp;  // log Σ_v exp(z_v)
  float sum;          // Σ_v z_v
};

// z [n] -> its statistics; `scratch` [n] is overwritten.
SoftmaxRowStats softmax_row_stats(const float* z, int64_t n, float* scratch);

// log Σ_v exp(z_v + bias_v) for v < n (bias may be null: none), in two sweeps of the row that
// store nothing: its maximum, then the shifted exponentials' sum. The same value as
// softmax_row_stats of the biased row, bit for bit. For nn/token_nll.h's forward, which keeps
// neither the biased row nor its exponentials: at the LSTM language model's evaluation shape a
// biased copy, a maximum and a stored exponential took three sweeps, about 1.2 ms of a 9 ms
// segment on the 2-core Zen 5 EPYC.
float biased_log_sum_exp(const float* z, const float* bias, int64_t n);

// The same log Σ_v exp(z_v + bias_v) in one sweep of the row: the unshifted exponentials summed
// with the maximum on the side, and biased_log_sum_exp where that maximum lies outside [-40, 60]
// (an exponential could overflow or fall to the floor) or the row is not finite. Equal to it up
// to float rounding, not bit for bit. For nn/token_nll.h's forward, where the logits come from
// memory (the LSTM language model's evaluation: [350, 10,000], 14 MB a segment) and the second
// sweep of biased_log_sum_exp read them again.
float biased_log_sum_exp_in_one_sweep(const float* z, const float* bias, int64_t n);

// max_v (z_v + bias_v) for v < n (bias may be null: none), in one sweep of 16 lanes; -inf for
// n = 0. For scans that pass over blocks of a row (decode/beam_candidates.cpp).
float biased_row_max(const float* z, const float* bias, int64_t n);

// p_v = exp(z_v - log_sum_exp) for v < n (p may be z).
void softmax_row(const float* z, int64_t n, float log_sum_exp, float* p);

// An attention row's scores to probabilities in place, in one sweep of the row from memory:
// z_v <- z_v + add_v + mask_v (add and mask may be null; mask_v is 0 for a key the query may see
// and -inf for a blocked one), then the softmax, where an entry at -inf gets exactly 0, as after
// masked_fill_(-inf) and at::softmax. A row whose entries are all -inf becomes NaN, as there.
// Transformer-XL's scores, content plus shifted position terms under the causal mask
// (nn/relative_attention_core.h): at::add_, masked_fill_ and at::softmax took three passes over
// [H, B, T, K] and about 15% of an evaluation segment's time at the bench shape
// (docs/benchmarks.md).
void masked_softmax_row(float* z, const float* add, const float* mask, int64_t n);

// The softmax's gradient for one row, in place: g_v <- p_v (g_v - Σ_u g_u p_u), where p is the
// softmax's output and g the gradient with respect to it (at::_softmax_backward_data's values; 0
// where p is 0). For nn/float_attention_core.h's backward.
void softmax_backward_row(const float* p, float* g, int64_t n);

}  // namespace mixseq
