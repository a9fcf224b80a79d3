// A linear map applied once per step of a recurrence that cannot run as one product, with the
// weight's gradient made once per sequence. Tacotron 2's decoder is the case: step t reads the
// attention context of step t - 1, so its LSTMs' products come one step at a time.
//
// Autograd of y_t = x_t Wᵀ + b, step by step, makes W's gradient one step at a time: an
// [out, B] x [B, in] product with an inner size of B (8 at Tacotron 2's bench shape), which runs at
// a fraction of the BLAS's speed, then an [out, in] add into the sum so far, at every step. A
// RecurrentLinear keeps each step's x_t and, in backward, each step's g_t = dL/dy_t; once backward
// has passed every step it makes dL/dW = Σ_t g_tᵀ x_t in one [out, T·B] x [T·B, in] product and
// dL/db = Σ_t Σ_rows g_t (nn/lstm_recurrence.h does the same inside a whole LSTM layer). A step's
// own backward makes only dL/dx_t = g_t W.
//
// How backward waits for every step: the gradient node takes W and b and gives a token (an empty
// scalar) that every step takes as an input, so autograd runs it only after the backward of every
// step that the loss reaches (steps it does not reach add nothing).
//
// Use: one RecurrentLinear per weight and forward pass, made before the loop; autograd's graph
// keeps what backward needs, so the object may go when the loop ends. Without a gradient to record
// (GradMode off, or neither W nor b requiring one) a step is nn/matrix_vector_cell.h's
// matrix_vector_linear, so batch-1 synthesis keeps its gemv path.
//
// Dtypes: as at::linear under autocast. Under autocast the products take operands in autocast's
// dtype (W converted once per forward pass, not per step) and y_t is in that dtype; otherwise in
// W's dtype. W's and b's gradients come back in their own dtypes: on the CPU under bf16 the
// weight's gradient is summed in fp32 (nn/bf16_matmul.h).
#pragma once

#include <torch/types.h>

#include <memory>
#include <tuple>

namespace mixseq {

class RecurrentLinear {
 public:
  // weight [out, in]; bias [out] or undefined. Reads GradMode and autocast now: make it inside the
  // forward pass, where the steps run.
  explicit RecurrentLinear(const torch::Tensor& weight, const torch::Tensor& bias = {});

  // One step: x [B, in] -> x Wᵀ + b [B, out].
  torch::Tensor operator()(const torch::Tensor& x) const;

  // Whether steps record the once-per-sequence gradient (otherwise they are plain products).
  bool records_gradient() const { return state_ != nullptr; }
  const torch::Tensor& weight() const { return weight_; }
  const torch::Tensor& bias() const { return bias_; }

  struct State;  // shared by the steps' and the gradient's autograd nodes (recurrent_linear.cpp)

 private:
  torch::Tensor weight_, bias_;
  std::shared_ptr<State> state_;
  torch::Tensor token_;  // the gradient node's output; every step's input
};

// An LSTM cell step (torch::nn::LSTMCell's gates i, f, g, o) whose two products are
// RecurrentLinears: gates = x W_ihᵀ + b_ih + h W_hhᵀ + b_hh. Without a gradient to record, a step
// is matrix_vector_lstm_cell (nn/matrix_vector_cell.h). Same dtypes as RecurrentLinear.
class RecurrentLstmCell {
 public:
  RecurrentLstmCell(const torch::Tensor& w_ih, const torch::Tensor& w_hh, const torch::Tensor& b_ih,
                    const torch::Tensor& b_hh);

  // x [B, in], h and c [B, H] -> (h', c'), each [B, H].
  std::tuple<torch::Tensor, torch::Tensor> operator()(const torch::Tensor& x, const torch::Tensor& h,
                                                      const torch::Tensor& c) const;

 private:
  RecurrentLinear input_, hidden_;
};

}  // namespace mixseq
