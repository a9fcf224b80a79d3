// One GRU layer (one or both directions) over a whole padded batch on the CPU, forward and
// backward written out: the recognizers' recurrent stack (models/deepspeech2.h), in training and
// in inference.
//
//   r = σ(x W_irᵀ + b_ir + h W_hrᵀ + b_hr),  z = σ(x W_izᵀ + b_iz + h W_hzᵀ + b_hz)
//   n = tanh(x W_inᵀ + b_in + r ⊙ (h W_hnᵀ + b_hn)),  h' = (1 - z) ⊙ n + z ⊙ h
//
// Why not LibTorch's GRU: on the CPU it runs every step's [B, H] x [H, 3H] product through the
// full operator dispatch and BLAS's thread pool, then a dozen elementwise operators per step: at
// DeepSpeech2's bench shape (B 8, H 256) about 110 µs a step, against the 200 k multiply-adds'
// few µs. In training autograd records all of them, and backward makes W_hh's gradient one step
// at a time ([3H, B] x [B, H] products of inner size B) and adds them up. Here the input products
// of every step and both directions are one GEMM; then each direction runs on its own thread,
// each step one single-threaded product (oneDNN's sgemm where the process has it, else BLAS)
// and one pass of cell arithmetic (σ(x) = (1 + tanh(x / 2)) / 2, nn/vectorized_tanh.h).
// Backward is the same recurrence run the other way, whose only per-step product is
// dgates_t W_hh; each weight's gradient is one product over all T·B frames after it, and x's
// gradient one product for both directions.
//
// Under bf16 autocast every product takes bf16 operands, as autocast would make them, and sums
// straight into fp32 (nn/bf16_matmul.h: oneDNN's bf16 GEMM, AMX where the CPU has it): the input
// products, x's and the weights' gradients, and each step's product, which reads h_{t-1} (forward)
// and the gate gradients (backward) from bf16 copies that the cell's pass writes beside them. Where
// the CPU has AMX each direction packs its W_hh for the tiles once per pass and runs its steps'
// products on them (nn/packed_bf16_matrix.h: 9 and 5 us a step at the bench shape against oneDNN's
// 20). The state, the cell arithmetic and every sum stay in fp32, as in nn/lstm_recurrence.h.
//
// Lengths as LibTorch's packed sequences: an utterance's frames past its length are 0 in the
// output (and get no gradient), and its backward direction starts at its own last frame. Values
// and gradients equal LibTorch's up to float rounding (the tests compare them with
// torch::nn::GRU over packed input, and with finite differences in double).
#pragma once

#include <torch/types.h>

#include <vector>

namespace mixseq {

struct GruWeights {  // one direction, LibTorch's layout: gates r, z, n
  torch::Tensor w_ih;  // [3H, Din]
  torch::Tensor w_hh;  // [3H, H]
  torch::Tensor b_ih;  // [3H]
  torch::Tensor b_hh;  // [3H]
};

// Whether gru_recurrence runs x with these weights: CPU, one or two directions, all weights fp32
// (fp64 for gradient checks, with x in fp64 and autocast off). Under CPU autocast x may be in any
// floating dtype: the products run in bf16 under bf16 autocast (in fp32 under another), the
// cell in fp32, and the output is fp32 (LibTorch's GRU under autocast is the per-step path
// this file exists to avoid).
bool gru_recurrence_applies(const torch::Tensor& x, const std::vector<GruWeights>& directions);

// x [T, B, Din], lengths [B] (each in 1..T) -> [T, B, D H]: each frame's outputs of the D
// directions side by side (forward first), as LibTorch's GRU with h0 = 0. Differentiable in x
// and the weights; without a gradient to record, nothing is kept for backward.
torch::Tensor gru_recurrence(const torch::Tensor& x, const torch::Tensor& lengths,
                             const std::vector<GruWeights>& directions);

}  // namespace mixseq
