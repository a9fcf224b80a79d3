// One LSTM layer over a whole sequence on the CPU, forward and backward written out, for the
// layers of nn/quantizable_lstm.h in float:
//
//   gates_t = x_t W_ihᵀ + b_ih + h_{t-1} W_hhᵀ + b_hh     i, f, g, o = split(gates_t)
//   c_t = σ(f) ⊙ c_{t-1} + σ(i) ⊙ tanh(g),   h_t = σ(o) ⊙ tanh(c_t)
//
// Why not LibTorch's LSTM: on the CPU it is a composite op, so autograd records every time
// step's products and backward computes W_ih's and W_hh's gradients one step at a time, [4H, B]
// x [B, H] products with an inner size of B (32 at the bench shape) that run at a fraction of
// the BLAS's speed, then adds them up (an [4H, H] add per step and layer): a third of a GNMT
// training step. Here forward makes x W_ihᵀ for all steps in one product and backward makes each
// weight's gradient in one [4H, B·T] x [B·T, ·] product after the recurrence, whose only
// per-step products are h_{t-1} W_hhᵀ forward and dgates_t W_hh backward. The cell arithmetic
// of a step is one pass over its gates (σ(x) = (1 + tanh(x / 2)) / 2, nn/vectorized_tanh.h).
// Forward keeps the activated gates, c_t and tanh(c_t) for backward.
//
// Dtypes: the cell arithmetic, the output and the state are in the weights' dtype (fp32; fp64 for
// gradient checks). Under bf16 autocast the matrix products take bf16 operands (as autocast would
// make them; oneDNN's AMX kernels where the CPU has them) and return to fp32 for the cell: the
// per-step products and the weights' gradients straight into fp32 (nn/bf16_matmul.h), from bf16
// copies of h_t and of the gate gradients that the cell's passes write, so no step converts a
// tensor of its own. On CPUs with AMX the per-step products run on tiles from a W_hh packed once
// per pass where its shape fits (nn/packed_bf16_matrix.h: H a multiple of 32).
#pragma once

#include <torch/types.h>

#include <memory>
#include <tuple>

namespace mixseq {

// W_hh laid out for the fp32 recurrence on panels (nn/lstm_hidden_panels.h), kept from one call
// that records nothing (evaluation, decoding) to the next for as long as W_hh is the same tensor
// with the same contents (its storage, place, shape and version counter); a change of any makes
// the next such call lay it out again (mixseq's fused optimizer steps, which write weights
// through their data, move the counter as in-place ops do). A call that records a graph
// (training) lets go of it, as TransposedWeight does (nn/cpu_float_linear.h): training keeps no
// copy beside the weights. A layer whose weights meet many inputs between their changes owns one
// and passes it in LstmWeights. Why: laying out W_hh took 1.7% of the LSTM
// language model's evaluation at its bench shape, every segment, for weights that never change
// there (docs/benchmarks.md). Copies start empty (a module that holds one may be cloned).
class LstmPanelCache {
 public:
  LstmPanelCache();
  ~LstmPanelCache();
  LstmPanelCache(const LstmPanelCache&);
  LstmPanelCache& operator=(const LstmPanelCache&);

  // Whether it holds W_hh laid out from w_hh as it is now (the next call that records nothing
  // packs nothing).
  bool holds(const torch::Tensor& w_hh) const;

  // Lets go of what it holds.
  void drop();

  struct State;  // nn/lstm_recurrence.cpp
  State& state() const { return *state_; }

 private:
  std::unique_ptr<State> state_;
};

struct LstmWeights {
  torch::Tensor w_ih;  // [4H, Din]
  torch::Tensor w_hh;  // [4H, H]
  torch::Tensor b_ih;  // [4H]
  torch::Tensor b_hh;  // [4H]
  LstmPanelCache* panel_cache = nullptr;  // optional; used only where nothing is recorded
};

// Whether lstm_recurrence runs x [B, T, Din] (any floating dtype) with these weights: CPU, fp32
// or fp64 weights, T > 0, and autocast off or in bf16 over fp32 weights.
bool lstm_recurrence_applies(const torch::Tensor& x, const LstmWeights& weights);

// x [B, T, Din], h0 and c0 [B, H] -> output [B, T, H] (h_t for every t), h_T [B, H], c_T [B, H].
// Differentiable in x, h0, c0 and the weights.
std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> lstm_recurrence(const torch::Tensor& x, const torch::Tensor& h0,
                                                                        const torch::Tensor& c0,
                                                                        const LstmWeights& weights);

}  // namespace mixseq
