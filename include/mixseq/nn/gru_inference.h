// One GRU layer (one or both directions) over a whole padded batch on the CPU, for inference:
// the recognizers' recurrent stack (models/deepspeech2.h) when no gradient is wanted.
//
//   r = σ(x W_irᵀ + b_ir + h W_hrᵀ + b_hr),  z = σ(x W_izᵀ + b_iz + h W_hzᵀ + b_hz)
//   n = tanh(x W_inᵀ + b_in + r ⊙ (h W_hnᵀ + b_hn)),  h' = (1 - z) ⊙ n + z ⊙ h
//
// Why not LibTorch's GRU: on the CPU it runs every step's [B, H] x [H, 3H] product through the
// full operator dispatch and BLAS's thread pool, then a dozen elementwise operators per step: at
// DeepSpeech2's bench shape (B 8, H 256) about 110 µs a step, against the 200 k multiply-adds'
// few µs. Here the input products of every step and both directions are one GEMM; then each
// direction runs on its own thread, each step one single-threaded BLAS call and one pass of cell
// arithmetic over its own buffers (σ(x) = (1 + tanh(x / 2)) / 2, nn/vectorized_tanh.h).
//
// Lengths as LibTorch's packed sequences: an utterance's frames past its length are 0 in the
// output and its backward direction starts at its own last frame. Values equal LibTorch's up to
// float rounding (the test compares them with torch::nn::GRU over packed input).
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

// Whether gru_inference runs x with these weights: CPU, fp32 input and weights, autograd off
// (GradMode disabled), autocast off, one or two directions.
bool gru_inference_applies(const torch::Tensor& x, const std::vector<GruWeights>& directions);

// x [T, B, Din], lengths [B] (each in 1..T) -> [T, B, D H]: each frame's outputs of the D
// directions side by side (forward first), as LibTorch's GRU with h0 = 0.
torch::Tensor gru_inference(const torch::Tensor& x, const torch::Tensor& lengths,
                            const std::vector<GruWeights>& directions);

}  // namespace mixseq
