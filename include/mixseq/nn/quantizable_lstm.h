// QuantizableLstm: a unidirectional single-layer batch-first LSTM (nn/lstm.h) whose two matrix
// products can be quantized like any linear layer (nn/quantizable_linear.h):
//
//   gates_t = (x_t W_ihᵀ + b_ih) + (h_{t-1} W_hhᵀ + b_hh)     i, f, g, o = split(gates_t)
//   c_t = σ(f) ⊙ c_{t-1} + σ(i) ⊙ tanh(g),   h_t = σ(o) ⊙ tanh(c_t)
//
// It is a torch::nn::LSTM (it derives from LSTMImpl): same parameters, names, initialization
// and random draws, so checkpoints are unchanged. In float it runs nn/lstm_recurrence.h on the
// CPU (the same function as torch::nn::LSTM, within float rounding, with faster gradients) and
// LibTorch's fused LSTM elsewhere (cuDNN on the GPU). The products are two child
// QuantizableLinear modules, "input_product" (W_ih, b_ih) and "hidden_product" (W_hh, b_hh),
// that share the LSTM's weights and register none of their own; quant/ finds, calibrates and
// quantizes them by those names like every other linear layer. The cell arithmetic is a third
// child, "cell" (nn/quantizable_lstm_cell.h), whose quantization points simulate quantized
// gates, products and activations. While a product or a point is quantized or observed
// (calibration), the LSTM runs the loop above step by step, through the children.
//
// The bidirectional first encoder layer (nn/bidirectional_lstm.h) runs the same loop per direction.
#pragma once

#include <torch/nn/modules/rnn.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <tuple>

#include "mixseq/nn/lstm.h"
#include "mixseq/nn/quantizable_linear.h"
#include "mixseq/nn/quantizable_lstm_cell.h"

namespace mixseq {

class QuantizableLstmImpl : public torch::nn::LSTMImpl {
 public:
  QuantizableLstmImpl(int64_t input_size, int64_t hidden_size);

  // x [B, T, Din], state (nullopt: zeros) -> output [B, T, H] and the state after the last step.
  std::tuple<torch::Tensor, LstmState> forward(const torch::Tensor& x, const torch::optional<LstmState>& state);

 private:
  std::tuple<torch::Tensor, LstmState> forward_by_products(const torch::Tensor& x,
                                                           const torch::optional<LstmState>& state);

  QuantizableLinear input_product_;   // x W_ihᵀ + b_ih: [B, T, Din] -> [B, T, 4H]
  QuantizableLinear hidden_product_;  // h W_hhᵀ + b_hh: [B, H] -> [B, 4H]
  QuantizableLstmCell cell_;
};

class QuantizableLstm : public torch::nn::ModuleHolder<QuantizableLstmImpl> {
 public:
  using torch::nn::ModuleHolder<QuantizableLstmImpl>::ModuleHolder;
};

}  // namespace mixseq
